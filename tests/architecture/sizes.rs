//! No production function is longer than a reader can hold: at most [`MAX_FUNCTION_LINES`]
//! lines from `fn` to its closing brace, test code (`#[cfg(test)]`, `tests.rs`, `testkit.rs`)
//! left out. A longer function is cut at its natural seams.

use super::*;

/// The longest a production function may be, in lines from `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 80;

#[test]
fn no_production_function_is_over_80_lines() {
    let mut found: Vec<String> = production()
        .iter()
        .chain([binary()])
        .flat_map(|file| {
            file.names.functions.iter().filter_map(move |f| {
                let lines = f.last + 1 - f.first;
                (lines > MAX_FUNCTION_LINES).then(|| {
                    format!(
                        "{}:{}: fn {} is {lines} lines (at most {MAX_FUNCTION_LINES})",
                        shown(&file.path),
                        f.first,
                        f.name
                    )
                })
            })
        })
        .collect();
    found.sort();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The reader measures every function with a body, nested ones and methods included, and
/// none of the test code.
#[test]
fn functions_are_measured_from_fn_to_the_closing_brace() {
    let src = "fn a() {\n    fn inner() {}\n}\nimpl X {\n    pub fn b(&self)\n    {\n    }\n}\ntrait T {\n    fn c() {}\n    fn d();\n}\n#[cfg(test)]\nfn e() {}\n";
    let got: Vec<(String, usize, usize)> = names(src, "test")
        .functions
        .into_iter()
        .map(|f| (f.name, f.first, f.last))
        .collect();
    let want = [("a", 1, 3), ("inner", 2, 2), ("b", 5, 7), ("c", 10, 10)];
    let want: Vec<(String, usize, usize)> = want
        .iter()
        .map(|(n, a, b)| (n.to_string(), *a, *b))
        .collect();
    assert_eq!(got, want);
}
