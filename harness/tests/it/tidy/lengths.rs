//! How long the workspace's functions are: none of library or binary code over
//! [`MOST_LINES`] lines, from its `fn` to its closing brace (issue 50: the core loops had
//! grown to 150-215 lines, and 34 functions past 100). A function that outgrows the bound
//! is split where it does more than one thing; the message names it with its length.

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::{repository, sources};

/// The most lines a function may take.
const MOST_LINES: usize = 80;

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

/// The message for each long function `found` (path, function).
fn offences(found: &[(String, Function)]) -> Vec<String> {
    found
        .iter()
        .map(|(path, function)| {
            format!(
                "{path}:{}: fn {} is {} lines (at most {MOST_LINES}): split it",
                function.line, function.name, function.lines
            )
        })
        .collect()
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
    let offences = offences(&found);
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_length_check_sees_long_functions_but_not_tests() {
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
    let offences = offences(&found);
    assert_eq!(offences.len(), 2);
    assert!(
        offences[0].starts_with("a.rs:1: fn long is 82 lines"),
        "{offences:?}"
    );
}
