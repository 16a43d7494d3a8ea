//! Writers for the `list` formats: column sequence, board and JSON array, one solution each.

use std::str::FromStr;

/// How `list` prints a solution.
///
/// ```
/// use std::str::FromStr;
/// let f = nqueens::Format::from_str("board").unwrap();
/// assert_eq!((f, f.lines_per_solution(8)), (nqueens::Format::Board, 9));
/// assert!(nqueens::Format::from_str("xml").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// 1-based columns separated by spaces.
    ///
    /// `2 4 6 1 3 5`.
    #[default]
    Seq,
    /// N lines of Q and . cells, then an empty line.
    ///
    /// The cells are space-separated.
    Board,
    /// A JSON array of 1-based columns per line.
    ///
    /// `[2,4,6,1,3,5]`.
    Json,
}

impl Format {
    /// Lines each solution takes in this format on an `n`×`n` board.
    pub fn lines_per_solution(self, n: usize) -> usize {
        match self {
            Format::Board => n + 1,
            Format::Seq | Format::Json => 1,
        }
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "seq" => Ok(Format::Seq),
            "board" => Ok(Format::Board),
            "json" => Ok(Format::Json),
            _ => Err(format!(
                "unknown format '{s}' (expected seq, board or json)"
            )),
        }
    }
}

/// Appends one solution (0-based columns) in `format` to `out`.
pub fn write_solution(out: &mut Vec<u8>, columns: &[u8], format: Format) {
    match format {
        Format::Seq => write_separated(out, columns, b' ', b"", b"\n"),
        Format::Json => write_separated(out, columns, b',', b"[", b"]\n"),
        Format::Board => {
            let n = columns.len();
            for &c in columns {
                for col in 0..n {
                    out.push(if col == c as usize { b'Q' } else { b'.' });
                    out.push(if col + 1 == n { b'\n' } else { b' ' });
                }
            }
            out.push(b'\n');
        }
    }
}

/// 1-based numbers separated by `sep`, between `open` and `close`. Columns are at most 32,
/// so two digits by hand beat a general integer formatter.
#[inline]
fn write_separated(out: &mut Vec<u8>, columns: &[u8], sep: u8, open: &[u8], close: &[u8]) {
    out.extend_from_slice(open);
    for (i, &c) in columns.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        let v = c + 1;
        if v >= 10 {
            out.push(b'0' + v / 10);
        }
        out.push(b'0' + v % 10);
    }
    out.extend_from_slice(close);
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn write_solution_example() {
        use crate::export::list::{write_solution, Format};
        let mut out = Vec::new();
        write_solution(&mut out, &[1, 3, 0, 2], Format::Seq);
        write_solution(&mut out, &[1, 3, 0, 2], Format::Json);
        write_solution(&mut out, &[1, 3, 0, 2], Format::Board);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2 4 1 3\n[2,4,1,3]\n. Q . .\n. . . Q\nQ . . .\n. . Q .\n\n"
        );
    }
}
