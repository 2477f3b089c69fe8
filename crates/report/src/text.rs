//! Plain-text tables: column widths from the widest cell, two spaces between columns, no
//! trailing blanks. Widths count characters, so task names in any script line up as long as
//! the terminal draws one column per character.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

const GAP: &str = "  ";

/// Width of a cell as drawn: characters, not counting ANSI colour sequences (`ESC [ ... m`).
pub(crate) fn width(cell: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for c in cell.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// Renders `header` (if any) and `rows` with `indent` spaces in front of every line. Rows
/// shorter than `align` are padded with empty cells; every line ends with `\n`.
pub(crate) fn render(
    header: Option<&[String]>,
    rows: &[Vec<String>],
    align: &[Align],
    indent: usize,
) -> String {
    let mut widths = vec![0usize; align.len()];
    for line in header.into_iter().chain(rows.iter().map(Vec::as_slice)) {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(width(cell));
        }
    }
    let mut out = String::new();
    for line in header.into_iter().chain(rows.iter().map(Vec::as_slice)) {
        let mut s = " ".repeat(indent);
        for (i, (&w, &a)) in widths.iter().zip(align).enumerate() {
            let cell = line.get(i).map(String::as_str).unwrap_or("");
            if i > 0 {
                s.push_str(GAP);
            }
            let pad = w - width(cell);
            match a {
                Align::Left => {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn aligns_columns_and_trims_trailing_blanks() {
        let header = cells(&["name", "ops"]);
        let rows = vec![
            cells(&["a", "12345"]),
            cells(&["longer", "7"]),
            cells(&["x"]),
        ];
        let text = render(Some(&header), &rows, &[Align::Left, Align::Right], 2);
        assert_eq!(
            text,
            "  name      ops\n\
             \x20 a       12345\n\
             \x20 longer      7\n\
             \x20 x\n"
        );
        // Colour sequences take no room.
        let rows = vec![
            cells(&["a", "\x1b[32m+1.00%\x1b[0m"]),
            cells(&["b", "-2.00%"]),
        ];
        let text = render(None, &rows, &[Align::Left, Align::Right], 0);
        assert_eq!(text, "a  \x1b[32m+1.00%\x1b[0m\nb  -2.00%\n");
    }
}
