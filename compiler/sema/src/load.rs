//! Loading modules: the root file and the standard library modules it `use`s (transitively), and the namespace
//! of each module (its own items, then what it imports).
//!
//! `use` forms: `use stdlib::reduce::block_sum;` and `use stdlib::reduce::{block_max, block_sum};` import names;
//! `use stdlib::reduce;` imports every function and constant of the module (a module's own items shadow these).
//! There are no path expressions: an imported name is used bare.

use crate::body::similar;
use crate::errors::{Located, SemaError};
use crate::{ModuleId, errors::Loc};
use cutec_diagnostics::{Diagnostic, FileId, SourceMap, Span};
use cutec_grammar::ast::{self, Ident, ItemKind};
use std::collections::HashMap;

/// The standard library, embedded: `(module name, source)`. A module is added to the [`SourceMap`] as
/// `stdlib/<name>.cute` the first time a program uses it.
pub static STDLIB: &[(&str, &str)] = &[("reduce", include_str!("../../../stdlib/reduce.cute"))];

/// What an item of a module is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ItemRefKind {
    Fn,
    Kernel,
    Const,
}

/// An item of some module.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ItemRef {
    pub module: ModuleId,
    pub item: usize,
    pub kind: ItemRefKind,
}

/// A name of a module's namespace and where it was introduced (in that module's file): the item's name, or the
/// name in the `use`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NsEntry {
    pub item: ItemRef,
    pub span: Span,
    /// Brought in by a whole-module `use`: anything more explicit replaces it.
    pub glob: bool,
}

pub(crate) type Namespace = HashMap<String, NsEntry>;

/// Every loaded module, parsed, with its namespace.
#[derive(Default)]
pub(crate) struct Loaded {
    pub asts: Vec<ast::Module>,
    pub files: Vec<FileId>,
    pub paths: Vec<String>,
    pub syntax: Vec<Diagnostic>,
    pub errors: Vec<Located>,
    pub namespaces: Vec<Namespace>,
    pub imports: Vec<Vec<(String, ModuleId, usize)>>,
}

/// A `use` waiting for its module's items: `None` names mean every item.
struct PendingImport {
    into: ModuleId,
    target: ModuleId,
    names: Option<Vec<Ident>>,
    span: Span,
}

/// The name of a kernel, function or const item.
pub(crate) fn item_name(item: &ast::Item) -> Option<&Ident> {
    match &item.kind {
        ItemKind::Kernel(f) | ItemKind::Fn(f) => Some(&f.name),
        ItemKind::Const(c) => Some(&c.name),
        ItemKind::Use(_) | ItemKind::Error => None,
    }
}

fn item_ref(module: ModuleId, index: usize, item: &ast::Item) -> Option<ItemRef> {
    let kind = match &item.kind {
        ItemKind::Kernel(_) => ItemRefKind::Kernel,
        ItemKind::Fn(_) => ItemRefKind::Fn,
        ItemKind::Const(_) => ItemRefKind::Const,
        _ => return None,
    };
    Some(ItemRef { module, item: index, kind })
}

impl Loaded {
    fn add(&mut self, file: FileId, path: String, src: &str) -> ModuleId {
        let (module, errors) = cutec_grammar::parse(src);
        self.syntax.extend(errors.iter().map(|e| e.to_diagnostic(file)));
        self.asts.push(module);
        self.files.push(file);
        self.paths.push(path);
        ModuleId(self.asts.len() as u32 - 1)
    }

    fn error(&mut self, m: ModuleId, error: SemaError) {
        let file = self.files[m.index()];
        self.errors.push(Located { file, error });
    }
}

/// Parses `root` and every stdlib module reachable through `use`, and builds the namespaces.
pub(crate) fn load(map: &mut SourceMap, root: FileId) -> Loaded {
    let mut l = Loaded::default();
    let src = map.source(root).to_owned();
    l.add(root, "main".to_owned(), &src);
    let mut pending = Vec::new();
    let mut next = 0;
    while next < l.asts.len() {
        let m = ModuleId(next as u32);
        next += 1;
        let uses: Vec<ast::Use> = l.asts[m.index()]
            .items
            .iter()
            .filter_map(|i| if let ItemKind::Use(u) = &i.kind { Some(u.clone()) } else { None })
            .collect();
        for u in uses {
            if let Some(p) = resolve_use(&mut l, map, m, u) {
                pending.push(p);
            }
        }
    }
    build_namespaces(&mut l, pending);
    l
}

/// Loads the module a `use` names; returns the import to resolve once all modules are loaded.
fn resolve_use(l: &mut Loaded, map: &mut SourceMap, m: ModuleId, u: ast::Use) -> Option<PendingImport> {
    let span = u.span;
    let mut path = u.path.into_iter();
    let first = path.next()?; // an empty path is a syntax error, already reported
    if first.name != "stdlib" {
        l.error(m, SemaError::NotStdlibPath { name: first.name, span: first.span });
        return None;
    }
    let Some(module) = path.next() else {
        let span = first.span;
        let available: Vec<String> = STDLIB.iter().map(|(n, _)| (*n).to_owned()).collect();
        l.error(m, SemaError::UnknownModule { name: String::new(), span, suggestion: None, available });
        return None;
    };
    let Some((name, src)) = STDLIB.iter().find(|(n, _)| *n == module.name) else {
        let suggestion = similar(&module.name, STDLIB.iter().map(|(n, _)| *n));
        let available = STDLIB.iter().map(|(n, _)| (*n).to_owned()).collect();
        l.error(m, SemaError::UnknownModule { name: module.name, span: module.span, suggestion, available });
        return None;
    };
    let rest: Vec<Ident> = path.collect();
    let names = match (rest.len(), u.names) {
        (0, names) => names,
        (1, None) => Some(rest),
        (_, _) => {
            l.error(m, SemaError::NoSubmodules { span: rest[0].span, module: module.name });
            return None;
        }
    };
    let path_name = format!("stdlib::{name}");
    let target = match l.paths.iter().position(|p| *p == path_name) {
        Some(i) => ModuleId(i as u32),
        None => {
            let file = map.add(format!("stdlib/{name}.cute"), *src);
            l.add(file, path_name, src)
        }
    };
    Some(PendingImport { into: m, target, names, span })
}

fn build_namespaces(l: &mut Loaded, pending: Vec<PendingImport>) {
    l.namespaces = vec![Namespace::new(); l.asts.len()];
    l.imports = vec![Vec::new(); l.asts.len()];
    let mut errors = Vec::new();
    for (mi, ast) in l.asts.iter().enumerate() {
        let m = ModuleId(mi as u32);
        let file = l.files[mi];
        for (i, item) in ast.items.iter().enumerate() {
            let (Some(name), Some(r)) = (item_name(item), item_ref(m, i, item)) else { continue };
            if let Some(first) = l.namespaces[mi].get(&name.name) {
                let first = Loc { file, span: first.span };
                errors
                    .push((m, SemaError::Duplicate { what: "item", name: name.name.clone(), span: name.span, first }));
                continue;
            }
            l.namespaces[mi].insert(name.name.clone(), NsEntry { item: r, span: name.span, glob: false });
        }
    }
    for p in pending {
        let target_ast = &l.asts[p.target.index()];
        let own = |name: &str| {
            target_ast
                .items
                .iter()
                .enumerate()
                .find(|(_, it)| item_name(it).is_some_and(|n| n.name == name))
                .and_then(|(i, it)| item_ref(p.target, i, it))
        };
        let file = l.files[p.into.index()];
        match p.names {
            None => {
                for (i, it) in target_ast.items.iter().enumerate() {
                    let (Some(n), Some(r)) = (item_name(it), item_ref(p.target, i, it)) else { continue };
                    if r.kind == ItemRefKind::Kernel {
                        continue;
                    }
                    // A module's own items and explicit imports shadow a whole-module import.
                    let ns = &mut l.namespaces[p.into.index()];
                    if !ns.contains_key(&n.name) {
                        ns.insert(n.name.clone(), NsEntry { item: r, span: p.span, glob: true });
                        l.imports[p.into.index()].push((n.name.clone(), p.target, i));
                    }
                }
            }
            Some(names) => {
                for n in names {
                    let Some(r) = own(&n.name) else {
                        let candidates: Vec<&str> =
                            target_ast.items.iter().filter_map(item_name).map(|i| i.name.as_str()).collect();
                        let suggestion = similar(&n.name, candidates);
                        let module = l.paths[p.target.index()].clone();
                        errors.push((
                            p.into,
                            SemaError::UnknownImport { name: n.name, module, span: n.span, suggestion },
                        ));
                        continue;
                    };
                    let ns = &mut l.namespaces[p.into.index()];
                    match ns.get(&n.name) {
                        Some(e) if e.item == r && !e.glob => {
                            // Harmless, but a sign of a copy-paste slip: say so rather than accept it silently.
                            let first = Loc { file, span: e.span };
                            errors
                                .push((p.into, SemaError::ImportedTwice { name: n.name.clone(), span: n.span, first }));
                        }
                        Some(e) if !e.glob => {
                            let first = Loc { file, span: e.span };
                            errors.push((
                                p.into,
                                SemaError::Duplicate { what: "name", name: n.name.clone(), span: n.span, first },
                            ));
                        }
                        _ => {
                            ns.insert(n.name.clone(), NsEntry { item: r, span: n.span, glob: false });
                            l.imports[p.into.index()].push((n.name.clone(), r.module, r.item));
                        }
                    }
                }
            }
        }
    }
    for (m, e) in errors {
        l.error(m, e);
    }
}
