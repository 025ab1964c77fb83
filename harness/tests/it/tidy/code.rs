//! The workspace's sources read as code, with `syn`: each file parsed, its `#[cfg(test)]`
//! items taken out wherever they sit (not the file cut at the first one, which hid what
//! came after it), and every path it names kept with the module it is named in, so that
//! imports resolve to the module and the file they name. The checks on them (the layers
//! table, cycles between files, re-exports across modules, no `Result<_, String>`) are pure
//! functions over a list of sources, tested below on small sources written in place.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

/// The workspace's code crates, from the bottom floor up: (package name, directory).
pub(super) const CRATES: &[(&str, &str)] = &[
    ("harness-protocol", "protocol"),
    ("harness-model", "model"),
    ("harness-runner", "runner"),
    ("harness-fuzz", "fuzzer"),
    ("harness-server", "server"),
    ("harness", "harness"),
];

/// The crates that are one module each, by package: every file of theirs, root included,
/// belongs to it.
pub(super) const ONE_MODULE_CRATES: &[(&str, &str)] = &[("harness-fuzz", "fuzz")];

/// One source file of a library or the binary, as code (comments and tests left out).
pub(super) struct Source {
    /// Path relative to the repository, with `/` (`runner/src/run/exec.rs`).
    pub(super) path: String,
    /// The package it belongs to (`harness-runner`).
    pub(super) krate: String,
    /// The top-level module it belongs to (`cli` for `main.rs`).
    pub(super) module: String,
    /// Its module path in its crate (`["run", "exec"]`; `[]` for `main.rs`).
    pub(super) module_path: Vec<String>,
    /// Its code as text: `#[cfg(test)]` items and full-line comments taken out.
    pub(super) code: String,
    /// Every path its code names (in `use`, in code, in macro bodies), but in tests.
    pub(super) paths: Vec<Named>,
    /// The module paths of the files it declares for tests only (`#[cfg(test)] mod x;`).
    pub(super) test_modules: Vec<Vec<String>>,
}

/// A path named in a source.
#[derive(Debug)]
pub(super) struct Named {
    /// The module path it is named in (the file's, and any inline module's around it).
    pub(super) scope: Vec<String>,
    /// Its segments as written (`["crate", "run", "exec", "Execution"]`).
    pub(super) segments: Vec<String>,
    /// Whether it is the path of a `pub use` (of any visibility but private).
    pub(super) reexport: bool,
}

impl Source {
    /// Parses one file: `path` is relative to the repository (`runner/src/run/exec.rs`).
    pub(super) fn parse(path: &str, krate: &str, text: &str) -> Result<Source, String> {
        let (module_path, module) = module_of(path);
        let module = one_module(krate).map_or(module, str::to_owned);
        let mut file = syn::parse_file(text).map_err(|error| {
            let start = error.span().start();
            format!("{path}:{}:{}: {error}", start.line, start.column)
        })?;
        let mut strip = StripTests {
            scope: module_path.clone(),
            lines: Vec::new(),
            test_modules: Vec::new(),
        };
        strip.visit_file_mut(&mut file);
        let mut collect = CollectPaths {
            scope: module_path.clone(),
            paths: Vec::new(),
        };
        collect.visit_file(&file);
        let code = text
            .lines()
            .enumerate()
            .filter(|(index, _)| {
                let line = index + 1;
                !strip
                    .lines
                    .iter()
                    .any(|(first, last)| (*first..=*last).contains(&line))
            })
            .map(|(_, line)| line)
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Source {
            path: path.to_owned(),
            krate: krate.to_owned(),
            module,
            module_path,
            code,
            paths: collect.paths,
            test_modules: strip.test_modules,
        })
    }

    /// A source known only by its text (for the scans that read text alone).
    pub(super) fn text_only(path: &str, krate: &str, module: &str, code: &str) -> Source {
        Source {
            path: path.to_owned(),
            krate: krate.to_owned(),
            module: one_module(krate).unwrap_or(module).to_owned(),
            module_path: module_of(path).0,
            code: code.to_owned(),
            paths: Vec::new(),
            test_modules: Vec::new(),
        }
    }
}

/// The one module of a crate that is one module (`fuzz` for `harness-fuzz`).
fn one_module(krate: &str) -> Option<&'static str> {
    ONE_MODULE_CRATES
        .iter()
        .find(|(name, _)| *name == krate)
        .map(|(_, module)| *module)
}

/// A file's module path in its crate and its top-level module (`cli` for `main.rs`).
fn module_of(path: &str) -> (Vec<String>, String) {
    let relative = path
        .split_once("/src/")
        .map_or(path, |(_, relative)| relative);
    let mut module_path: Vec<String> = relative
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if matches!(
        module_path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        module_path.pop();
    }
    let module = if relative == "main.rs" {
        "cli".to_owned()
    } else {
        module_path.first().cloned().unwrap_or_default()
    };
    (module_path, module)
}

/// Whether `attrs` make an item test-only: `#[cfg(test)]`, or `test` in a `cfg(all(..))`.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    fn predicate(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(path) => path.is_ident("test"),
            syn::Meta::List(list) if list.path.is_ident("all") => list
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|metas| metas.iter().any(predicate)),
            _ => false,
        }
    }
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<syn::Meta>().is_ok_and(|m| predicate(&m))
    })
}

/// Takes `#[cfg(test)]` items out, wherever they are, keeping their lines.
struct StripTests {
    scope: Vec<String>,
    /// The first and last line of each item taken out.
    lines: Vec<(usize, usize)>,
    test_modules: Vec<Vec<String>>,
}

impl StripTests {
    fn keep<T: Spanned>(&mut self, item: &T, attrs: &[syn::Attribute]) -> bool {
        if !test_only(attrs) {
            return true;
        }
        let span = item.span();
        self.lines.push((span.start().line, span.end().line));
        false
    }

    fn items(&mut self, items: &mut Vec<syn::Item>) {
        items.retain(|item| {
            let attrs = item_attrs(item);
            if let syn::Item::Mod(module) = item
                && module.content.is_none()
                && test_only(attrs)
            {
                let mut path = self.scope.clone();
                path.push(module.ident.to_string());
                self.test_modules.push(path);
            }
            self.keep(item, attrs)
        });
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(item) => &item.attrs,
        syn::Item::Enum(item) => &item.attrs,
        syn::Item::ExternCrate(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::ForeignMod(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Macro(item) => &item.attrs,
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Static(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Trait(item) => &item.attrs,
        syn::Item::TraitAlias(item) => &item.attrs,
        syn::Item::Type(item) => &item.attrs,
        syn::Item::Union(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

impl VisitMut for StripTests {
    fn visit_file_mut(&mut self, file: &mut syn::File) {
        self.items(&mut file.items);
        syn::visit_mut::visit_file_mut(self, file);
    }

    fn visit_item_mod_mut(&mut self, module: &mut syn::ItemMod) {
        self.scope.push(module.ident.to_string());
        if let Some((_, items)) = &mut module.content {
            self.items(items);
        }
        syn::visit_mut::visit_item_mod_mut(self, module);
        self.scope.pop();
    }

    fn visit_item_impl_mut(&mut self, item: &mut syn::ItemImpl) {
        item.items.retain(|member| {
            let attrs = match member {
                syn::ImplItem::Const(member) => &member.attrs,
                syn::ImplItem::Fn(member) => &member.attrs,
                syn::ImplItem::Type(member) => &member.attrs,
                syn::ImplItem::Macro(member) => &member.attrs,
                _ => return true,
            };
            self.keep(member, attrs)
        });
        syn::visit_mut::visit_item_impl_mut(self, item);
    }

    fn visit_item_trait_mut(&mut self, item: &mut syn::ItemTrait) {
        item.items.retain(|member| {
            let attrs = match member {
                syn::TraitItem::Const(member) => &member.attrs,
                syn::TraitItem::Fn(member) => &member.attrs,
                syn::TraitItem::Type(member) => &member.attrs,
                syn::TraitItem::Macro(member) => &member.attrs,
                _ => return true,
            };
            self.keep(member, attrs)
        });
        syn::visit_mut::visit_item_trait_mut(self, item);
    }

    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        block.stmts.retain(|stmt| match stmt {
            syn::Stmt::Item(item) => self.keep(item, item_attrs(item)),
            syn::Stmt::Local(local) => self.keep(local, &local.attrs),
            syn::Stmt::Macro(mac) => self.keep(mac, &mac.attrs),
            _ => true,
        });
        syn::visit_mut::visit_block_mut(self, block);
    }
}

/// Gathers every path a file names, with the module it is named in.
struct CollectPaths {
    scope: Vec<String>,
    paths: Vec<Named>,
}

impl CollectPaths {
    fn push(&mut self, segments: Vec<String>, reexport: bool) {
        if !segments.is_empty() {
            self.paths.push(Named {
                scope: self.scope.clone(),
                segments,
                reexport,
            });
        }
    }

    /// Each path of a `use` tree, groups spread out (`a::{b, c::d}` is `a::b`, `a::c::d`).
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, reexport: bool) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree, reexport);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let mut segments = prefix.clone();
                if name.ident != "self" {
                    segments.push(name.ident.to_string());
                }
                self.push(segments, reexport);
            }
            syn::UseTree::Rename(rename) => {
                let mut segments = prefix.clone();
                if rename.ident != "self" {
                    segments.push(rename.ident.to_string());
                }
                self.push(segments, reexport);
            }
            syn::UseTree::Glob(_) => self.push(prefix.clone(), reexport),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree, reexport);
                }
            }
        }
    }

    /// The paths in a macro's tokens that start at a crate root or a module
    /// (`crate::a::b`, `super::x`, `harness_model::check`); not `$crate::...`.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut at = 0;
        while at < tokens.len() {
            if let TokenTree::Group(group) = &tokens[at] {
                self.tokens(group.stream());
                at += 1;
                continue;
            }
            let after_dollar = at > 0
                && matches!(&tokens[at - 1], TokenTree::Punct(punct) if punct.as_char() == '$');
            let after_colons = at > 0
                && matches!(&tokens[at - 1], TokenTree::Punct(punct) if punct.as_char() == ':');
            let TokenTree::Ident(first) = &tokens[at] else {
                at += 1;
                continue;
            };
            let first = first.to_string();
            let root = first == "crate"
                || first == "super"
                || first == "self"
                || first.starts_with("harness_")
                || first == "harness";
            if !root || after_dollar || after_colons {
                at += 1;
                continue;
            }
            let mut segments = vec![first];
            let mut next = at + 1;
            while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)), Some(name)) =
                (tokens.get(next), tokens.get(next + 1), tokens.get(next + 2))
            {
                if a.as_char() != ':' || b.as_char() != ':' {
                    break;
                }
                let TokenTree::Ident(name) = name else { break };
                segments.push(name.to_string());
                next += 3;
            }
            if segments.len() > 1 {
                self.push(segments, false);
            }
            at = next;
        }
    }
}

impl<'ast> Visit<'ast> for CollectPaths {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        self.scope.push(module.ident.to_string());
        syn::visit::visit_item_mod(self, module);
        self.scope.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let reexport = !matches!(item.vis, syn::Visibility::Inherited);
        self.use_tree(&mut Vec::new(), &item.tree, reexport);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        self.push(segments, false);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        // Paths in attributes' strings (`#[serde(with = "crate::x")]`) are code too; a
        // doc comment is not.
        if attr.path().is_ident("doc") {
            return;
        }
        if let syn::Meta::List(list) = &attr.meta {
            for token in list.tokens.clone() {
                if let TokenTree::Literal(literal) = token
                    && let Ok(syn::Lit::Str(text)) =
                        syn::parse_str::<syn::Lit>(&literal.to_string())
                    && let Ok(path) = syn::parse_str::<syn::Path>(&text.value())
                {
                    self.visit_path(&path);
                }
            }
        }
    }
}

/// What the checks know of the workspace: its sources, by crate and module path.
pub(super) struct Workspace<'a> {
    pub(super) sources: &'a [Source],
    /// (crate, module path) → index of the source that is that module's file.
    files: BTreeMap<(String, Vec<String>), usize>,
    /// Every top-level module of every crate (the facade names them in `harness`).
    modules: BTreeSet<String>,
}

/// Where a named path leads: a crate, and a file of it when it is one of ours.
struct Target {
    krate: String,
    segments: Vec<String>,
}

impl<'a> Workspace<'a> {
    pub(super) fn new(sources: &'a [Source]) -> Workspace<'a> {
        let files = sources
            .iter()
            .enumerate()
            .map(|(index, source)| ((source.krate.clone(), source.module_path.clone()), index))
            .collect();
        let modules = sources
            .iter()
            .filter(|source| source.module != "cli")
            .map(|source| source.module.clone())
            .collect();
        Workspace {
            sources,
            files,
            modules,
        }
    }

    /// The crate and absolute module path a named path leads to, if it leads into the
    /// workspace (`std::...`, a local variable or an item in scope lead nowhere).
    fn resolve(&self, source: &Source, named: &Named) -> Option<Target> {
        let segments = &named.segments;
        let first = segments.first()?.as_str();
        let crate_named = CRATES
            .iter()
            .find(|(krate, _)| krate.replace('-', "_") == first)
            .map(|(krate, _)| (*krate).to_owned());
        let (krate, absolute) = match first {
            "crate" => (source.krate.clone(), segments[1..].to_vec()),
            "self" => {
                let mut absolute = named.scope.clone();
                absolute.extend_from_slice(&segments[1..]);
                (source.krate.clone(), absolute)
            }
            "super" => {
                let mut absolute = named.scope.clone();
                let supers = segments.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    absolute.pop()?;
                }
                absolute.extend_from_slice(&segments[supers..]);
                (source.krate.clone(), absolute)
            }
            _ if crate_named.is_some() => (crate_named?, segments[1..].to_vec()),
            _ => {
                // A child module named without a root (`exec::Execution` in `run/mod.rs`).
                let mut child = named.scope.clone();
                child.push(first.to_owned());
                if !self.files.contains_key(&(source.krate.clone(), child)) {
                    return None;
                }
                let mut absolute = named.scope.clone();
                absolute.extend_from_slice(segments);
                (source.krate.clone(), absolute)
            }
        };
        Some(Target {
            krate,
            segments: absolute,
        })
    }

    /// The top-level module a target is in (the facade's `harness::run` is the runner's).
    fn top_module(&self, target: &Target) -> Option<String> {
        if let Some(module) = one_module(&target.krate) {
            return Some(module.to_owned());
        }
        let first = target.segments.first()?;
        self.modules.contains(first).then(|| first.clone())
    }

    /// The file of our own a target is in: the longest module path that is a file.
    fn file_of(&self, target: &Target) -> Option<usize> {
        (1..=target.segments.len()).rev().find_map(|length| {
            self.files
                .get(&(target.krate.clone(), target.segments[..length].to_vec()))
                .copied()
        })
    }

    /// The top-level modules other than its own that a source's code names.
    pub(super) fn imports(&self, source: &Source) -> BTreeSet<String> {
        source
            .paths
            .iter()
            .filter_map(|named| self.resolve(source, named))
            .filter_map(|target| self.top_module(&target))
            .filter(|module| *module != source.module)
            .collect()
    }

    /// Every `pub use` of an item of another module or crate: a re-export hides where
    /// the item lives, and with it the dependency the layers table should show.
    pub(super) fn reexports(&self, source: &Source) -> Vec<String> {
        source
            .paths
            .iter()
            .filter(|named| named.reexport)
            .filter(|named| {
                self.resolve(source, named).is_none_or(|target| {
                    target.krate != source.krate
                        || self.top_module(&target).as_deref() != Some(source.module.as_str())
                })
            })
            .map(|named| format!("{}: pub use {}", source.path, named.segments.join("::")))
            .collect()
    }

    /// The files of one crate that import each other, directly or round a longer loop:
    /// each strongly connected set of two or more files, sorted. A module's file naming
    /// its own submodules (`run/mod.rs` naming `exec::Execution`) is no edge: it declares
    /// them, and they are its table of contents's entries.
    pub(super) fn file_cycles(&self) -> Vec<Vec<String>> {
        let count = self.sources.len();
        let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); count];
        for (from, source) in self.sources.iter().enumerate() {
            for named in &source.paths {
                let Some(target) = self.resolve(source, named) else {
                    continue;
                };
                let Some(to) = self.file_of(&target) else {
                    continue;
                };
                let to_source = &self.sources[to];
                let descendant = to_source.krate == source.krate
                    && to_source.module_path.starts_with(&source.module_path);
                if to != from && !descendant {
                    edges[from].insert(to);
                }
            }
        }
        strongly_connected(&edges)
            .into_iter()
            .filter(|set| set.len() > 1)
            .map(|set| {
                let mut paths: Vec<String> = set
                    .into_iter()
                    .map(|index| self.sources[index].path.clone())
                    .collect();
                paths.sort();
                paths
            })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

/// Every `Result<_, String>` a file's code names, but in tests, as `path:line: line`: a
/// function's or trait method's return type, a closure's or function pointer's, a static's
/// or a turbofish's; and `type Err = String` (or `Error`) in an impl, the same error by
/// another name (`FromStr`, `TryFrom`). A `Result` is anything so named with two arguments
/// (`std::result::Result` too); code inside a macro's body is not read.
pub(super) fn string_errors(path: &str, text: &str) -> Vec<String> {
    let mut file = syn::parse_file(text).unwrap_or_else(|error| panic!("{path}: {error}"));
    StripTests {
        scope: Vec::new(),
        lines: Vec::new(),
        test_modules: Vec::new(),
    }
    .visit_file_mut(&mut file);
    let mut find = FindStringErrors { lines: Vec::new() };
    find.visit_file(&file);
    find.lines.sort_unstable();
    find.lines.dedup();
    let text_lines: Vec<&str> = text.lines().collect();
    find.lines
        .into_iter()
        .map(|line| {
            let code = text_lines.get(line - 1).map_or("", |code| code.trim());
            format!("{path}:{line}: {code}")
        })
        .collect()
}

/// Gathers the lines of the `Result<_, String>` types of a file.
struct FindStringErrors {
    lines: Vec<usize>,
}

/// Whether a type is `String` (`std::string::String` too).
fn is_string(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    path.qself.is_none()
        && path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "String" && segment.arguments.is_none())
}

impl<'ast> Visit<'ast> for FindStringErrors {
    fn visit_type_path(&mut self, ty: &'ast syn::TypePath) {
        if let Some(last) = ty.path.segments.last()
            && last.ident == "Result"
            && let syn::PathArguments::AngleBracketed(arguments) = &last.arguments
            && arguments.args.len() == 2
            && let Some(syn::GenericArgument::Type(error)) = arguments.args.last()
            && is_string(error)
        {
            self.lines.push(ty.span().start().line);
        }
        syn::visit::visit_type_path(self, ty);
    }

    fn visit_impl_item_type(&mut self, item: &'ast syn::ImplItemType) {
        if (item.ident == "Err" || item.ident == "Error") && is_string(&item.ty) {
            self.lines.push(item.span().start().line);
        }
        syn::visit::visit_impl_item_type(self, item);
    }
}

/// Tarjan's strongly connected components of a graph given as adjacency sets.
fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'e> {
        edges: &'e [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        sets: Vec<Vec<usize>>,
    }
    fn connect(state: &mut State<'_>, node: usize) {
        state.index[node] = Some(state.next);
        state.low[node] = state.next;
        state.next += 1;
        state.stack.push(node);
        state.on_stack[node] = true;
        for &next in state.edges[node].iter() {
            match state.index[next] {
                None => {
                    connect(state, next);
                    state.low[node] = state.low[node].min(state.low[next]);
                }
                Some(index) if state.on_stack[next] => {
                    state.low[node] = state.low[node].min(index);
                }
                Some(_) => {}
            }
        }
        if Some(state.low[node]) == state.index[node] {
            let mut set = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack[member] = false;
                set.push(member);
                if member == node {
                    break;
                }
            }
            state.sets.push(set);
        }
    }
    let count = edges.len();
    let mut state = State {
        edges,
        index: vec![None; count],
        low: vec![0; count],
        on_stack: vec![false; count],
        stack: Vec::new(),
        next: 0,
        sets: Vec::new(),
    };
    for node in 0..count {
        if state.index[node].is_none() {
            connect(&mut state, node);
        }
    }
    state.sets
}

fn parse(path: &str, krate: &str, text: &str) -> Source {
    Source::parse(path, krate, text).unwrap()
}

/// An import after a test module is still an import: the scan that cut each file at its
/// first `#[cfg(test)]` missed it (the proxy's clock, issue 39).
#[test]
fn an_import_after_a_test_module_is_seen() {
    let source = parse(
        "server/src/proxy/mod.rs",
        "harness-server",
        r#"
#[cfg(test)]
mod tests;

use harness_protocol::auth::clock::Clock;

#[cfg(test)]
mod inline {
    use crate::serve::Fault;
}

pub struct Config { pub clock: Clock }
"#,
    );
    let others = [
        Source::text_only("protocol/src/auth/clock.rs", "harness-protocol", "auth", ""),
        Source::text_only("server/src/serve/mod.rs", "harness-server", "serve", ""),
        source,
    ];
    let workspace = Workspace::new(&others);
    let imports = workspace.imports(&others[2]);
    assert_eq!(imports, BTreeSet::from(["auth".to_owned()]));
    assert_eq!(others[2].test_modules, vec![vec!["proxy", "tests"]]);
    assert!(!others[2].code.contains("mod inline"), "{}", others[2].code);
}

/// A path in a group, in a macro's body or in a function is an import as much as a `use`.
#[test]
fn paths_in_groups_bodies_and_macros_are_imports() {
    let sources = [
        Source::text_only("model/src/check/mod.rs", "harness-model", "check", ""),
        Source::text_only("model/src/case/mod.rs", "harness-model", "case", ""),
        Source::text_only("model/src/results.rs", "harness-model", "results", ""),
        parse(
            "model/src/report/mod.rs",
            "harness-model",
            r#"
use crate::{case::Case, check::{Verdict}};
fn f() { let _ = format!("{}", crate::results::count()); }
macro_rules! m { () => { $crate::diff::x() } }
"#,
        ),
    ];
    let workspace = Workspace::new(&sources);
    assert_eq!(
        workspace.imports(&sources[3]),
        BTreeSet::from(["case".to_owned(), "check".to_owned(), "results".to_owned()])
    );
}

/// Two files that import each other are a cycle, and so is a loop of three; a module's
/// file naming its submodules is not.
#[test]
fn file_cycles_are_found() {
    let sources = [
        parse(
            "runner/src/run/mod.rs",
            "harness-runner",
            "mod exec; mod step_call; mod a; mod b; mod c; pub struct Config; fn f() { exec::go(); }",
        ),
        parse(
            "runner/src/run/exec.rs",
            "harness-runner",
            "use super::Config; use super::step_call::call; pub fn go() {}",
        ),
        parse(
            "runner/src/run/step_call.rs",
            "harness-runner",
            "use crate::run::exec::go; pub fn call() {}",
        ),
        parse("runner/src/run/a.rs", "harness-runner", "use super::b::x;"),
        parse(
            "runner/src/run/b.rs",
            "harness-runner",
            "fn x() { super::c::y() }",
        ),
        parse(
            "runner/src/run/c.rs",
            "harness-runner",
            "fn y() { format!(\"{}\", crate::run::a::z()) }",
        ),
    ];
    let cycles = Workspace::new(&sources).file_cycles();
    assert_eq!(
        cycles,
        vec![
            vec![
                "runner/src/run/a.rs".to_owned(),
                "runner/src/run/b.rs".to_owned(),
                "runner/src/run/c.rs".to_owned(),
            ],
            vec![
                "runner/src/run/exec.rs".to_owned(),
                "runner/src/run/step_call.rs".to_owned(),
            ],
        ]
    );
}

/// A `pub use` of another module's or crate's item is found; one of a submodule's, or a
/// private `use`, is not.
#[test]
fn reexports_across_modules_are_found() {
    let sources = [
        Source::text_only("protocol/src/spec/mod.rs", "harness-protocol", "spec", ""),
        Source::text_only("model/src/check/mod.rs", "harness-model", "check", ""),
        Source::text_only("model/src/case/load.rs", "harness-model", "case", ""),
        parse(
            "model/src/case/mod.rs",
            "harness-model",
            r#"
mod load;
pub use load::discover;
pub(crate) use self::load::files_under;
use crate::check::Finding;
pub use crate::check::Outcome;
pub(crate) use harness_protocol::spec::{Kind as SpecKind};
"#,
        ),
    ];
    let workspace = Workspace::new(&sources);
    assert_eq!(
        workspace.reexports(&sources[3]),
        vec![
            "model/src/case/mod.rs: pub use crate::check::Outcome".to_owned(),
            "model/src/case/mod.rs: pub use harness_protocol::spec::Kind".to_owned(),
        ]
    );
}

/// Only `cfg(test)` and `cfg(all(test, ..))` make code test-only; `cfg(not(test))` and
/// a feature do not.
#[test]
fn only_test_cfgs_are_taken_out() {
    let source = parse(
        "runner/src/conformance.rs",
        "harness-runner",
        r#"
#[cfg(all(unix, test))]
use crate::a::A;
#[cfg(not(test))]
use crate::b::B;
#[cfg(feature = "conformance")]
use crate::c::C;
impl X {
    #[cfg(test)]
    fn helper() { crate::d::D; }
}
"#,
    );
    let named: BTreeSet<String> = source
        .paths
        .iter()
        .filter(|named| named.segments[0] == "crate")
        .map(|named| named.segments[1].clone())
        .collect();
    assert_eq!(named, BTreeSet::from(["b".to_owned(), "c".to_owned()]));
}

/// A `Result<_, String>` is found wherever the code names one (a signature, a trait
/// method, a closure's type, a turbofish, an impl's `type Err`), over several lines too;
/// tests, another error type and a `String` that is no `Result`'s error are not.
#[test]
fn string_errors_are_found_in_every_place_but_tests() {
    let text = r#"
pub fn launch() -> Result<(), String> { Ok(()) }
pub trait Dial {
    fn open(&self) -> std::result::Result<
        u16,
        String,
    >;
}
type Check = Box<dyn Fn(&str) -> Result<u8, String>>;
fn all() { let _ = [Ok(1)].into_iter().collect::<Result<Vec<u8>, String>>(); }
impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(text: &str) -> Result<Shard, Self::Err> { todo!() }
}
pub fn fine() -> Result<String, DialError> { todo!() }
pub fn io() -> std::io::Result<String> { todo!() }
#[cfg(test)]
fn helper() -> Result<(), String> { Ok(()) }
#[cfg(test)]
mod tests {
    fn helper() -> Result<(), String> { Ok(()) }
}
"#;
    let found = string_errors("runner/src/x.rs", text);
    assert_eq!(
        found,
        vec![
            "runner/src/x.rs:2: pub fn launch() -> Result<(), String> { Ok(()) }",
            "runner/src/x.rs:4: fn open(&self) -> std::result::Result<",
            "runner/src/x.rs:9: type Check = Box<dyn Fn(&str) -> Result<u8, String>>;",
            "runner/src/x.rs:10: fn all() { let _ = [Ok(1)].into_iter().collect::<Result<Vec<u8>, String>>(); }",
            "runner/src/x.rs:12: type Err = String;",
        ]
    );
}

/// No code of the workspace's crates, library or binary, names a `Result<_, String>`
/// (issue 50, "one home per rule"): an error is a type named for what failed, with a
/// variant per cause (a `thiserror` enum of its module), not a sentence a caller can only
/// print. Tests may do as they like.
#[test]
fn no_result_has_a_string_error() {
    let repository = super::repository();
    let mut paths: Vec<String> = super::sources()
        .iter()
        .map(|source| source.path.clone())
        .collect();
    // `sources()` leaves the crate roots out (they only declare modules); they are code too.
    paths.extend(CRATES.iter().map(|(_, dir)| format!("{dir}/src/lib.rs")));
    paths.sort();
    paths.dedup();
    let mut found = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(repository.join(path)).unwrap();
        found.extend(string_errors(path, &text));
    }
    assert!(
        found.is_empty(),
        "Result<_, String> in the workspace's code: name the error with a type of its module (a thiserror enum, a variant per cause):\n{}",
        found.join("\n")
    );
}
