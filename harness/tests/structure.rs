//! The workspace's structure: no file-level import cycle inside any crate.
//!
//! A file *takes* a name from another file of its crate when it refers to an item defined
//! there: through a `use` (followed through re-exports), or through a path in its code
//! (`crate::…`, `super::…`, a child module, or a name its `use`s brought in; macro arguments
//! that parse as expressions included). Names a module's file takes from its own parent
//! module's file do not count: the parent declares the child, and a module with its children
//! is one unit. Every other taking is an edge, and a cycle of edges is a failure that names
//! the files and the names that tie them. In the harness's crates, whose boundaries are the
//! design, so is a cycle between a crate's top-level modules (`executor` and `oracles`, say),
//! each taken with all its files. Test modules (`#[cfg(test)]`) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The crates of the workspace, by their `src` directory relative to the repository root,
/// with their root file and whether cycles between their top-level modules count too.
const CRATES: [(&str, &str, bool); 7] = [
    ("compiler/src", "lib.rs", false),
    ("compiler/src", "main.rs", false),
    ("harness/src", "lib.rs", true),
    ("harness/check/src", "lib.rs", true),
    ("harness/generator/src", "lib.rs", true),
    ("harness/cost-model/src", "lib.rs", true),
    ("harness/plugin/src", "lib.rs", true),
];

/// One module file: its module path, what it defines and what its `use`s bring in.
#[derive(Default)]
struct ModuleFile {
    path: PathBuf,
    module: Vec<String>,
    /// Names of the items defined at its top level.
    items: BTreeSet<String>,
    /// Names brought in by `use` (also re-exports), with the path they stand for, relative
    /// to this module.
    aliases: BTreeMap<String, Vec<String>>,
    /// Modules glob-imported (`use path::*`), relative to this module.
    globs: Vec<Vec<String>>,
    /// Every path this file refers to, relative to this module.
    references: Vec<Vec<String>>,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "test"))
}

/// The paths of a `use` tree, each with the name it binds (`None` for a glob).
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => out.push((prefix.clone(), prefix.last().cloned())),
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push((path, Some(n.ident.to_string())));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(t, prefix, out)),
    }
}

/// Collects the paths a file's code refers to.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl<'a> Visit<'a> for Paths {
    fn visit_path(&mut self, path: &'a syn::Path) {
        self.0.push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'a syn::Macro) {
        self.visit_path(&mac.path);
        let args = mac.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        if let Ok(args) = args {
            args.iter().for_each(|e| self.visit_expr(e));
        }
    }

    /// A `use` inside a function or an inline module.
    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        let mut found = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut found);
        self.0.extend(found.into_iter().map(|(path, _)| path));
    }

    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        if !is_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
}

/// The file of `mod name;` declared in `file`.
fn child_file(file: &Path, name: &str) -> Option<PathBuf> {
    let stem = file.file_stem()?.to_str()?;
    let dir = if matches!(stem, "mod" | "lib" | "main") { file.parent()?.to_path_buf() } else { file.with_extension("") };
    [dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs")].into_iter().find(|p| p.is_file())
}

/// Reads the module tree of a crate from its root file.
fn read_crate(root: &Path) -> Vec<ModuleFile> {
    let mut files = Vec::new();
    let mut todo = vec![(root.to_path_buf(), Vec::new())];
    while let Some((path, module)) = todo.pop() {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut file = ModuleFile { path: path.clone(), module: module.clone(), ..ModuleFile::default() };
        let mut paths = Paths::default();
        for item in &ast.items {
            let name = match item {
                syn::Item::Fn(i) if !is_test(&i.attrs) => Some(&i.sig.ident),
                syn::Item::Struct(i) => Some(&i.ident),
                syn::Item::Enum(i) => Some(&i.ident),
                syn::Item::Trait(i) => Some(&i.ident),
                syn::Item::Type(i) => Some(&i.ident),
                syn::Item::Const(i) => Some(&i.ident),
                syn::Item::Static(i) => Some(&i.ident),
                syn::Item::Union(i) => Some(&i.ident),
                syn::Item::Macro(i) => i.ident.as_ref(),
                _ => None,
            };
            if let Some(name) = name {
                file.items.insert(name.to_string());
            }
            match item {
                syn::Item::Mod(m) if m.content.is_none() && !is_test(&m.attrs) => {
                    let child = child_file(&path, &m.ident.to_string()).unwrap_or_else(|| panic!("{}: no file for mod {}", path.display(), m.ident));
                    let mut child_module = module.clone();
                    child_module.push(m.ident.to_string());
                    todo.push((child, child_module));
                }
                syn::Item::Use(u) if !is_test(&u.attrs) => {
                    let mut found = Vec::new();
                    use_paths(&u.tree, &mut Vec::new(), &mut found);
                    for (target, name) in found {
                        file.references.push(target.clone());
                        match name {
                            Some(name) => {
                                file.aliases.insert(name, target);
                            }
                            None => file.globs.push(target),
                        }
                    }
                }
                _ => paths.visit_item(item),
            }
        }
        file.references.extend(paths.0);
        files.push(file);
    }
    files
}

/// The crate's files, with name resolution over them.
struct Crate {
    files: Vec<ModuleFile>,
    by_module: BTreeMap<Vec<String>, usize>,
}

impl Crate {
    fn new(files: Vec<ModuleFile>) -> Crate {
        let by_module = files.iter().enumerate().map(|(i, f)| (f.module.clone(), i)).collect();
        Crate { files, by_module }
    }

    /// `path` as written in the module `at`, made absolute; `None` when it leaves the crate
    /// (another crate, `std`, a local name).
    fn absolute(&self, at: &[String], path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        let mut module: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => at.to_vec(),
            "super" => {
                let mut m = at.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    m.pop();
                    rest = &rest[1..];
                }
                m.extend(rest.iter().cloned());
                return Some(m);
            }
            _ => {
                let file = &self.files[*self.by_module.get(at)?];
                if let Some(target) = file.aliases.get(first).filter(|t| t.as_slice() != path) {
                    let mut full = self.absolute(at, target)?;
                    full.extend(path[1..].iter().cloned());
                    return Some(full);
                }
                let mut child = at.to_vec();
                child.push(first.clone());
                if !self.by_module.contains_key(&child) {
                    return None;
                }
                at.to_vec()
            }
        };
        let skip = usize::from(matches!(first.as_str(), "crate" | "self"));
        module.extend(path[skip..].iter().cloned());
        Some(module)
    }

    /// The file defining what the absolute `path` names, with the name; `None` for a module
    /// itself or a name not found.
    fn defining(&self, path: &[String], depth: usize) -> Option<(usize, String)> {
        let (split, &file) = (0..=path.len()).rev().find_map(|n| self.by_module.get(&path[..n]).map(|f| (n, f)))?;
        let name = path.get(split)?;
        let module = &self.files[file];
        if module.items.contains(name) {
            return Some((file, name.clone()));
        }
        if depth < 8
            && let Some(target) = module.aliases.get(name)
            && let Some(full) = self.absolute(&module.module, target)
        {
            return self.defining(&full, depth + 1).or(Some((file, name.clone())));
        }
        None
    }

    /// Every edge `from → to` with the names that make it (see the module documentation).
    fn edges(&self) -> BTreeMap<(usize, usize), BTreeSet<String>> {
        let mut edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
        for (from, file) in self.files.iter().enumerate() {
            let parent = file.module.split_last().map(|(_, p)| p.to_vec());
            let mut add = |to: usize, name: String| {
                if to != from && parent.as_deref() != Some(self.files[to].module.as_slice()) {
                    edges.entry((from, to)).or_default().insert(name);
                }
            };
            for reference in &file.references {
                let Some(full) = self.absolute(&file.module, reference) else { continue };
                if let Some((to, name)) = self.defining(&full, 0) {
                    add(to, name);
                }
            }
            for glob in &file.globs {
                if let Some(&to) = self.absolute(&file.module, glob).and_then(|m| self.by_module.get(&m)) {
                    add(to, "*".into());
                }
            }
        }
        edges
    }
}

/// The cycles of a graph of `n` nodes: its strongly connected components of two or more.
fn cycles(n: usize, edges: &BTreeMap<(usize, usize), BTreeSet<String>>) -> Vec<Vec<usize>> {
    let succ = |v: usize| edges.range((v, 0)..(v + 1, 0)).map(|(&(_, w), _)| w).collect::<Vec<_>>();
    // Tarjan's algorithm, iteratively.
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut found, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            let successors = succ(v);
            if let Some(&w) = successors.get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    found.push(component);
                }
            }
        }
    }
    found
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the harness is in the repository").to_path_buf()
}

/// The cycles of the crate rooted at `root`, described: between files, then (with `modules`)
/// between top-level modules.
fn cycles_of(root: &Path, modules: bool) -> Vec<String> {
    let krate = Crate::new(read_crate(root));
    let edges = krate.edges();
    let name = |f: usize| krate.files[f].path.strip_prefix(repository()).unwrap_or(&krate.files[f].path).display().to_string();
    let mut found = describe(&cycles(krate.files.len(), &edges), &edges, &name);
    if !modules {
        return found;
    }
    let tops: Vec<String> = krate.files.iter().filter_map(|f| f.module.first().cloned()).collect::<BTreeSet<_>>().into_iter().collect();
    let top_of = |f: usize| krate.files[f].module.first().and_then(|m| tops.iter().position(|t| t == m));
    let mut module_edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    for (&(a, b), names) in &edges {
        if let (Some(x), Some(y)) = (top_of(a), top_of(b))
            && x != y
        {
            module_edges.entry((x, y)).or_default().extend(names.iter().map(|n| format!("{n} ({})", name(a))));
        }
    }
    let module_name = |m: usize| format!("module `{}` of {}", tops[m], root.strip_prefix(repository()).unwrap_or(root).display());
    found.extend(describe(&cycles(tops.len(), &module_edges), &module_edges, &module_name));
    found
}

/// Cycles as text: their members, and the names on every edge between two of them.
fn describe(found: &[Vec<usize>], edges: &BTreeMap<(usize, usize), BTreeSet<String>>, name: &dyn Fn(usize) -> String) -> Vec<String> {
    found
        .iter()
        .into_iter()
        .map(|component| {
            let members: BTreeSet<usize> = component.iter().copied().collect();
            let ties: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), names)| format!("  {} -> {}: {}", name(*a), name(*b), names.iter().cloned().collect::<Vec<_>>().join(", ")))
                .collect();
            format!("{} members: {}\n{}", component.len(), component.iter().map(|&f| name(f)).collect::<Vec<_>>().join(", "), ties.join("\n"))
        })
        .collect()
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    for (src, root, modules) in CRATES {
        found.extend(cycles_of(&repository().join(src).join(root), modules));
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn a_cycle_between_two_files_is_found_with_its_names() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write");
    write("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\npub struct Root;\nfn r(_: d::Delta) {}\n");
    write("d.rs", "pub struct Delta;\nfn s(_: crate::Root) {}\n");
    write("a.rs", "use crate::b::Beta;\npub struct Alpha;\nfn f(_: Beta) {}\n");
    write("b.rs", "pub struct Beta;\nfn g() -> super::a::Alpha { super::a::Alpha }\n");
    write("c.rs", "use super::a::Alpha;\nfn h(_: Alpha) {}\n");
    let found = cycles_of(&dir.path().join("lib.rs"), false);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("a.rs -> ") && found[0].contains(": Beta") && found[0].contains(": Alpha"), "{}", found[0]);
    assert!(!found[0].contains("c.rs"), "c only takes from a: {}", found[0]);
    assert!(!found[0].contains("d.rs"), "d takes from its parent only: {}", found[0]);
    let with_modules = cycles_of(&dir.path().join("lib.rs"), true);
    assert_eq!(with_modules.len(), 2, "the files' cycle, and their modules': {with_modules:?}");
    assert!(with_modules[1].contains("module `a`") && with_modules[1].contains("module `b`"), "{}", with_modules[1]);
}
