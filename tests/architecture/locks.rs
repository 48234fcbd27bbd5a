//! One poison-tolerant lock helper that every mutex goes through.

use syn::Expr;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};

use super::*;

/// Every mutex is locked through [`LOCK_HELPER`] (or, in the test kit, which cannot depend on
/// the crate, its copy [`KIT_LOCK_HELPER`]): no `lock()` whose poisoning is handled (or
/// ignored) on the spot — `unwrap_or_else(|p| p.into_inner())`, `.unwrap()`, `.expect(…)`,
/// `.map(…)`, `.ok()`, `?`, `if let Ok(…) = m.lock()`, `match m.lock()` — anywhere in `src/`,
/// `tests/` or `examples/` but in those helpers, macro arguments included.
/// (`stdout().lock()` and the like are not mutexes; `Condvar` waits return a guard the helper
/// cannot take, and stay as they are.)
#[test]
fn the_lock_helper_is_written_once() {
    let helpers = [LOCK_HELPER_FILE, KIT_LOCK_HELPER_FILE].map(|h| Path::new(ROOT).join(h));
    let mut found = Vec::new();
    let files = ["src", "tests", "examples"]
        .into_iter()
        .flat_map(rust_files);
    for path in files.filter(|p| !helpers.contains(p)) {
        for at in handled_locks(&read(&path), &shown(&path)) {
            found.push(format!(
                "{}:{at}: lock with {LOCK_HELPER} ({KIT_LOCK_HELPER} in the test kit)",
                shown(&path)
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The lines of the Rust source `text` where a `lock()` result is handled on the spot.
fn handled_locks(text: &str, what: &str) -> Vec<usize> {
    let mut locks = Locks::default();
    locks.visit_file(&parse(text, what));
    locks.handled.sort_unstable();
    locks.handled.dedup();
    locks.handled
}

/// The line of the `lock` of `e`, when `e` is `….lock()` on something that is not
/// `stdout()`, `stderr()` or `stdin()`.
fn lock_call(e: &Expr) -> Option<usize> {
    match e {
        Expr::MethodCall(call) => lock_of(call),
        _ => None,
    }
}

/// [`lock_call`] of a method call.
fn lock_of(call: &syn::ExprMethodCall) -> Option<usize> {
    let stdio = matches!(&*call.receiver, Expr::Call(c) if matches!(&*c.func,
    Expr::Path(p) if p.path.segments.last().is_some_and(|s| {
        ["stdout", "stderr", "stdin"].contains(&s.ident.to_string().as_str())
    })));
    (call.method == "lock" && call.args.is_empty() && !stdio).then(|| line(call.method.span()))
}

/// The method calls that handle a lock's `Result` on the spot, by their name's start.
const HANDLERS: [&str; 6] = ["unwrap", "expect", "map", "ok", "is_ok", "is_err"];

/// Finds the `lock()` calls whose `Result` is handled on the spot ([`Locks::handled`]), or,
/// with `all`, every `lock()` call (inside a scrutinee).
#[derive(Default)]
struct Locks {
    all: bool,
    handled: Vec<usize>,
}

impl Locks {
    /// Every `lock()` call in `e`.
    fn all_in(e: &Expr) -> Vec<usize> {
        let mut all = Locks {
            all: true,
            handled: Vec::new(),
        };
        all.visit_expr(e);
        all.handled
    }
}

impl<'ast> Visit<'ast> for Locks {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let handler = HANDLERS
            .iter()
            .any(|h| call.method.to_string().starts_with(h));
        let found = if self.all {
            lock_of(call)
        } else {
            lock_call(&call.receiver).filter(|_| handler)
        };
        self.handled.extend(found);
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        if let Some(at) = lock_call(&t.expr) {
            self.handled.push(at);
        }
        visit::visit_expr_try(self, t);
    }

    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        let ok = matches!(&*l.pat, syn::Pat::TupleStruct(p) if p.path.is_ident("Ok"));
        if ok {
            self.handled.extend(Locks::all_in(&l.expr));
        }
        visit::visit_expr_let(self, l);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.handled.extend(Locks::all_in(&m.expr));
        visit::visit_expr_match(self, m);
    }

    /// Macro arguments are code too: read as expressions (`assert!(…)`, `format!(…)`) or as
    /// statements; a macro whose input is neither has no call to find.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Ok(args) = m.parse_body_with(Punctuated::<Expr, syn::Token![,]>::parse_terminated) {
            args.iter().for_each(|e| self.visit_expr(e));
        } else if let Ok(stmts) = m.parse_body_with(syn::Block::parse_within) {
            stmts.iter().for_each(|s| self.visit_stmt(s));
        }
    }
}

#[test]
fn locks_handled_on_the_spot_are_found_in_code_and_macro_arguments_only() {
    let src = r#"
fn f(m: &Mutex<u8>) -> Result<(), E> {
    let a = m.lock().unwrap();
    let b = m.lock().unwrap_or_else(|p| p.into_inner());
    if let Ok(g) = m.lock() {}
    match m.lock() { _ => {} }
    let c = m.lock()?;
    assert!(m.lock().is_ok(), "a message");
    let fine = lock(&m);
    let out = std::io::stdout().lock();
    let s = "m.lock().unwrap()"; // m.lock().unwrap()
    /* m.lock().expect("x") */
    Ok(())
}
"#;
    assert_eq!(handled_locks(src, "test"), [3, 4, 5, 6, 7, 8]);
}
