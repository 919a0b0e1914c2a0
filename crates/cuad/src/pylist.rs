//! `master_clauses.csv` stores each category's spans as a Python list literal
//! (`['a', "it's"]`), with Python escapes (`\n`, `\'`, `\xNN`, `\uNNNN`). This reads exactly that
//! grammar; anything else is an error naming the offending character.

/// Parses a Python list of string literals.
pub fn parse_string_list(cell: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = cell.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if chars.get(i) != Some(&'[') {
        return Err("expected '[' at the start of the span list".into());
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        skip_ws(&mut i);
        match chars.get(i) {
            Some(']') if out.is_empty() => {
                i += 1;
                break;
            }
            Some(&quote @ ('\'' | '"')) => {
                i += 1;
                out.push(parse_literal(&chars, &mut i, quote)?);
            }
            Some(c) => return Err(format!("unexpected {c:?} at character {i}")),
            None => return Err("unterminated list".into()),
        }
        skip_ws(&mut i);
        match chars.get(i) {
            Some(',') => i += 1,
            Some(']') => {
                i += 1;
                break;
            }
            Some(c) => return Err(format!("expected ',' or ']' at character {i}, found {c:?}")),
            None => return Err("unterminated list".into()),
        }
    }
    skip_ws(&mut i);
    if i != chars.len() {
        return Err(format!("trailing text after the list at character {i}"));
    }
    Ok(out)
}

fn parse_literal(chars: &[char], i: &mut usize, quote: char) -> Result<String, String> {
    let mut s = String::new();
    loop {
        let Some(&c) = chars.get(*i) else {
            return Err("unterminated string".into());
        };
        *i += 1;
        if c == quote {
            return Ok(s);
        }
        if c != '\\' {
            s.push(c);
            continue;
        }
        let Some(&e) = chars.get(*i) else {
            return Err("unterminated escape".into());
        };
        *i += 1;
        match e {
            'n' => s.push('\n'),
            't' => s.push('\t'),
            'r' => s.push('\r'),
            '\\' | '\'' | '"' => s.push(e),
            'x' | 'u' | 'U' => {
                let digits = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.iter().skip(*i).take(digits).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == digits)
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("bad \\{e} escape {hex:?}"))?;
                *i += digits;
                s.push(code);
            }
            // Python keeps unknown escapes verbatim.
            other => {
                s.push('\\');
                s.push(other);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals() {
        assert_eq!(parse_string_list("[]").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse_string_list(r#"['a, b', "it's", 'x\'y\nz', '\xe9\u00e9']"#).unwrap(),
            vec!["a, b", "it's", "x'y\nz", "éé"]
        );
        assert!(parse_string_list("['a'").is_err());
        assert!(parse_string_list("['a' 'b']").is_err());
        assert!(parse_string_list("a").is_err());
    }
}
