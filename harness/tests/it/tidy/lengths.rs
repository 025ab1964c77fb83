//! How long the workspace's functions are: none of library or binary code over
//! [`MOST_LINES`] lines, from its `fn` to its closing brace, but the ones
//! [`LONGER_FOR_NOW`] lists, each at most as long as it is listed. The list only shrinks: a
//! listed function split below the bound, or shorter than listed, fails until its row goes
//! or shrinks with it, so no function grows back unseen.

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::{repository, sources};

/// The most lines a function may take.
const MOST_LINES: usize = 80;

/// The functions longer than [`MOST_LINES`] today (path, name, lines): the ones left to
/// split (issue 50). A row may only be removed or lowered.
#[rustfmt::skip]
const LONGER_FOR_NOW: &[(&str, &str, usize)] = &[
    ("model/src/check/answer.rs", "answer", 113),
    ("model/src/check/captured.rs", "judge_captured", 91),
    ("model/src/check/matcher.rs", "check_value", 114),
    ("model/src/report/markdown.rs", "render_markdown", 87),
];

/// A function of a file: its name, first line and length in lines.
#[derive(Debug)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// Collects the functions with a body, but those of `#[cfg(test)]` items.
#[derive(Default)]
struct Functions(Vec<Function>);

fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr.meta.require_list().is_ok_and(|list| {
                list.tokens
                    .to_string()
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|word| word == "test")
            })
    })
}

impl Functions {
    fn add(&mut self, signature: &syn::Signature, block: &syn::Block) {
        let name = &signature.ident;
        let line = signature.fn_token.span.start().line;
        let last = block.span().end().line;
        self.0.push(Function {
            name: name.to_string(),
            line,
            lines: last + 1 - line,
        });
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if !test_only(&module.attrs) {
            syn::visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if !test_only(&item.attrs) {
            syn::visit::visit_item_impl(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !test_only(&item.attrs) {
            self.add(&item.sig, &item.block);
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !test_only(&item.attrs) {
            self.add(&item.sig, &item.block);
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.add(&item.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}

/// The functions of `text` (a whole file) longer than [`MOST_LINES`].
fn long_functions(text: &str) -> Vec<Function> {
    let file = syn::parse_file(text).expect("parses");
    let mut functions = Functions::default();
    functions.visit_file(&file);
    functions
        .0
        .into_iter()
        .filter(|function| function.lines > MOST_LINES)
        .collect()
}

/// What is wrong with the long functions `found` (path, function) against the list.
fn offences(found: &[(String, Function)], listed: &[(&str, &str, usize)]) -> Vec<String> {
    let mut offences = Vec::new();
    for (path, function) in found {
        let row = listed
            .iter()
            .find(|(row_path, name, _)| row_path == path && *name == function.name);
        match row {
            None => offences.push(format!(
                "{path}:{}: fn {} is {} lines (at most {MOST_LINES}): split it",
                function.line, function.name, function.lines
            )),
            Some((_, _, most)) if function.lines > *most => offences.push(format!(
                "{path}:{}: fn {} grew to {} lines ({most} listed in LONGER_FOR_NOW): split it",
                function.line, function.name, function.lines
            )),
            Some((_, _, most)) if function.lines < *most => offences.push(format!(
                "{path}:{}: fn {} is {} lines now: lower its row in LONGER_FOR_NOW from {most}",
                function.line, function.name, function.lines
            )),
            Some(_) => {}
        }
    }
    for (path, name, _) in listed {
        if !found
            .iter()
            .any(|(found_path, function)| found_path == path && function.name == *name)
        {
            offences.push(format!(
                "{path}: fn {name} is no longer over {MOST_LINES} lines (or gone): remove its row from LONGER_FOR_NOW"
            ));
        }
    }
    offences
}

#[test]
fn no_function_is_longer_than_its_bound() {
    let mut found = Vec::new();
    for source in sources() {
        let text = std::fs::read_to_string(repository().join(&source.path)).unwrap();
        for function in long_functions(&text) {
            found.push((source.path.clone(), function));
        }
    }
    let offences = offences(&found, LONGER_FOR_NOW);
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_length_check_sees_long_functions_and_stale_rows() {
    let body = "    let x = 1;\n".repeat(MOST_LINES);
    let text = format!(
        "fn long() {{\n{body}}}\nfn short() {{}}\nimpl A {{\n    fn method(&self) {{\n{body}    }}\n}}\n#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\n"
    );
    let long = long_functions(&text);
    let names: Vec<&str> = long.iter().map(|function| function.name.as_str()).collect();
    assert_eq!(names, ["long", "method"]);
    assert_eq!(long[0].lines, MOST_LINES + 2);
    let found: Vec<(String, Function)> = long
        .into_iter()
        .map(|function| ("a.rs".to_owned(), function))
        .collect();
    // Unlisted: both fail.
    assert_eq!(offences(&found, &[]).len(), 2);
    // Listed at their length: none; listed longer or shorter, or listed and gone: each one.
    let at = MOST_LINES + 2;
    assert!(offences(&found, &[("a.rs", "long", at), ("a.rs", "method", at)]).is_empty());
    let lower = offences(&found, &[("a.rs", "long", at + 5), ("a.rs", "method", at)]);
    assert!(lower[0].contains("lower its row"), "{lower:?}");
    let grew = offences(&found, &[("a.rs", "long", at - 1), ("a.rs", "method", at)]);
    assert!(grew[0].contains("grew"), "{grew:?}");
    let stale = offences(
        &found,
        &[
            ("a.rs", "long", at),
            ("a.rs", "method", at),
            ("b.rs", "gone", 90),
        ],
    );
    assert!(stale[0].contains("remove its row"), "{stale:?}");
}
