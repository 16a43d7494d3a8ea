//! A reference solver with no bit tricks: plain arrays and an O(n) conflict check.

/// Whether a queen on (row, col) is attacked by the queens of rows `0..row`.
pub fn attacked(q: &[usize], row: usize, col: usize) -> bool {
    (0..row).any(|r| q[r] == col || q[r].abs_diff(col) == row - r)
}

/// Every completion of `prefix` (0-based columns) on an n×n board, in lexicographic order.
pub fn solutions_from(n: usize, prefix: &[usize]) -> Vec<Vec<usize>> {
    let mut q = vec![0; n];
    q[..prefix.len()].copy_from_slice(prefix);
    let mut out = Vec::new();
    if (0..prefix.len()).all(|r| prefix[r] < n && !attacked(&q, r, q[r])) {
        extend(n, prefix.len(), &mut q, &mut out);
    }
    out
}

fn extend(n: usize, row: usize, q: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if row == n {
        out.push(q.clone());
        return;
    }
    for col in 0..n {
        if !attacked(q, row, col) {
            q[row] = col;
            extend(n, row + 1, q, out);
        }
    }
}

/// All solutions of the n×n board.
pub fn solutions(n: usize) -> Vec<Vec<usize>> {
    solutions_from(n, &[])
}

/// Whether `q` is a complete, valid solution.
pub fn is_solution(q: &[usize]) -> bool {
    let n = q.len();
    (0..n).all(|r| q[r] < n && !attacked(q, r, q[r]))
}

/// The eight images of a solution, by explicit coordinate maps.
pub fn images(q: &[usize]) -> Vec<Vec<usize>> {
    let n = q.len();
    type SquareMap = fn(usize, usize, usize) -> (usize, usize);
    let maps: [SquareMap; 8] = [
        |_, r, c| (r, c),
        |n, r, c| (c, n - 1 - r),
        |n, r, c| (n - 1 - r, n - 1 - c),
        |n, r, c| (n - 1 - c, r),
        |n, r, c| (r, n - 1 - c),
        |n, r, c| (n - 1 - r, c),
        |_, r, c| (c, r),
        |n, r, c| (n - 1 - c, n - 1 - r),
    ];
    maps.iter()
        .map(|m| {
            let mut img = vec![0; n];
            for (r, &c) in q.iter().enumerate() {
                let (r2, c2) = m(n, r, c);
                img[r2] = c2;
            }
            img
        })
        .collect()
}

/// The lexicographically smallest image.
pub fn canonical(q: &[usize]) -> Vec<usize> {
    images(q).into_iter().min().unwrap()
}

/// Number of classes of solutions under the 8 symmetries.
pub fn unique_count(n: usize) -> usize {
    let mut forms: Vec<Vec<usize>> = solutions(n).iter().map(|q| canonical(q)).collect();
    forms.sort();
    forms.dedup();
    forms.len()
}

/// An explicit solution for any n >= 4 (the classic evens-then-odds construction).
pub fn explicit_solution(n: usize) -> Vec<usize> {
    let evens: Vec<usize> = (2..=n).step_by(2).collect();
    let mut odds: Vec<usize> = (1..=n).step_by(2).collect();
    let mut evens = evens;
    match n % 6 {
        2 => {
            odds.swap(0, 1);
            let five = odds.remove(2);
            odds.push(five);
        }
        3 => {
            let two = evens.remove(0);
            evens.push(two);
            odds.drain(..2);
            odds.extend([1, 3]);
        }
        _ => {}
    }
    evens.iter().chain(&odds).map(|c| c - 1).collect()
}
