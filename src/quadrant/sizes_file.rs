//! The quarters' placement counts kept on disk, so that the sizing is paid once a machine
//! (or once a cluster, where the directory is shared) and not once a process: N = 27's
//! quarters take about 20 core-seconds, as long as a few of its units.
//!
//! One text file a quarter shape, in `NQUEENS_CACHE_DIR`, else `$XDG_CACHE_HOME/nqueens`,
//! else `$HOME/.cache/nqueens`: a header naming the shape, the count of each row set in
//! order, and a CRC-32 of all that. A file that does not check out is counted again and
//! written anew; one that cannot be written is no error (the counts only plan the memory).

use std::io::Write;
use std::path::PathBuf;

/// Shapes with fewer rows are counted in milliseconds: not kept.
pub(super) const KEPT_FROM_ROWS: usize = 12;

/// The counts of a `rows`×`cols` quarter kept on disk, where a file of them checks out.
pub(super) fn read(rows: usize, cols: usize) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(path(rows, cols)?).ok()?;
    parse(&text, (rows, cols))
}

/// Keeps the counts of a `rows`×`cols` quarter on disk (written whole, then renamed into
/// place, so that a reader never sees half a file); nothing is said where that fails.
pub(super) fn write(rows: usize, cols: usize, counts: &[u64]) {
    let Some(path) = path(rows, cols) else {
        return;
    };
    let written = || -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().expect("a file in a directory"))?;
        let part = path.with_extension(format!("{}.part", std::process::id()));
        let mut file = std::fs::File::create(&part)?;
        file.write_all(text(counts, (rows, cols)).as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&part, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&part);
        })
    };
    let _ = written();
}

/// The file of a shape, where a directory is known.
fn path(rows: usize, cols: usize) -> Option<PathBuf> {
    let var = |name: &str| crate::environment::set(|n| std::env::var(n).ok(), name);
    let dir = var("NQUEENS_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("nqueens")))
        .or_else(|| var("HOME").map(|d| PathBuf::from(d).join(".cache/nqueens")))?;
    Some(dir.join(format!("quarter-placements-{rows}x{cols}.txt")))
}

/// The first line of a shape's file.
fn header((rows, cols): (usize, usize)) -> String {
    format!("nqueens quarter placements {rows}x{cols}, one row set a line\n")
}

/// A shape's file: its header, its counts, and the CRC-32 of both.
fn text(counts: &[u64], shape: (usize, usize)) -> String {
    let mut text = header(shape);
    for count in counts {
        text += &format!("{count}\n");
    }
    let crc = crc32fast::hash(text.as_bytes());
    text + &format!("crc32 {crc:08x}\n")
}

/// The counts of a shape's file, where its header, length and CRC-32 check out and the
/// empty row set has its one placement.
fn parse(text: &str, shape: (usize, usize)) -> Option<Vec<u64>> {
    let body = text.strip_suffix('\n')?;
    let (body, crc) = body.rsplit_once("crc32 ")?;
    let crc = u32::from_str_radix(crc, 16).ok()?;
    let counted = body.strip_prefix(&header(shape))?;
    if crc32fast::hash(body.as_bytes()) != crc {
        return None;
    }
    let counts: Vec<u64> = counted
        .lines()
        .map(|l| l.parse().ok())
        .collect::<Option<_>>()?;
    (counts.len() == 1 << shape.0 && counts.first() == Some(&1)).then_some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_back_and_a_damaged_one_does_not() {
        let counts: Vec<u64> = (0..8)
            .map(|i| if i == 0 { 1 } else { i * 1000 + 7 })
            .collect();
        let good = text(&counts, (3, 5));
        assert_eq!(parse(&good, (3, 5)), Some(counts.clone()));
        // another shape, a changed count, a cut file, a count short
        assert_eq!(parse(&good, (3, 6)), None);
        assert_eq!(parse(&good.replacen("2007", "2008", 1), (3, 5)), None);
        assert_eq!(parse(&good[..good.len() - 3], (3, 5)), None);
        assert_eq!(parse(&text(&counts[..7], (3, 5)), (3, 5)), None);
        let no_empty = [[0].as_slice(), &counts[1..]].concat();
        assert_eq!(parse(&text(&no_empty, (3, 5)), (3, 5)), None);
    }
}
