//! The architecture as a test (issue #42). The product's top-level modules are layers, declared
//! in `src/lib.rs` from the bottom up; a module imports only modules declared before it, so no
//! cycle can form between them. The emulator's top-level modules (`crates/github-emulator/src`)
//! have no cycle either.
//!
//! Imports are read from the source text: `crate::NAME` (also inside `crate::{...}` groups) and
//! `super::` paths that climb to the crate root, outside comments, strings and test code
//! (`#[cfg(test)]` items, `tests.rs` files and `tests/` folders), which may use any module as a
//! fixture. It does not look below the top level: files inside one module may use each other.
//!
//! Two rules more (issue #53): the use cases (layer 5 of `src/lib.rs`) never import one another,
//! so what two of them share lives below them; and a module with a door ([`DOORS`]) keeps its
//! submodules private, naming what the rest of the tool uses in its top file, and no file outside
//! it names one of its submodules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module -> (module it imports -> the files that import it).
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

#[test]
fn no_product_module_imports_a_module_declared_after_it_in_lib_rs() {
    // Given the product's layers as src/lib.rs declares them, bottom first
    let src = root().join("src");
    let layers = declared_modules(&src.join("lib.rs"));
    // When every top-level module's imports are read
    let graph = imports(&src);
    // Then each module was declared in lib.rs, and imports only modules declared before it
    let undeclared: Vec<&String> = graph.keys().filter(|m| !layers.contains(m)).collect();
    assert!(
        undeclared.is_empty(),
        "not declared in lib.rs: {undeclared:?}"
    );
    let climbs = climbing_imports(&layers, &graph);
    assert!(
        climbs.is_empty(),
        "imports of a higher layer (src/lib.rs lists the layers bottom first):\n{}",
        climbs.join("\n")
    );
}

/// The product's modules with a door: the rest of the tool names only what their top file
/// exposes.
const DOORS: [&str; 7] = [
    "host",
    "salvage",
    "thirdshift",
    "snapshot",
    "ending",
    "view",
    "observe",
];

/// The layer of `src/lib.rs` that holds the use cases.
const USE_CASES: u32 = 5;

#[test]
fn no_use_case_imports_another() {
    // Given the use cases as src/lib.rs declares them (its layer 5) and every module's imports
    let src = root().join("src");
    let use_cases = layer(&src.join("lib.rs"), USE_CASES);
    assert!(use_cases.len() >= 4, "layer 5 of src/lib.rs: {use_cases:?}");
    let graph = imports(&src);
    // When the imports between two use cases are looked for, then there is none
    let crossing = crossing_imports(&use_cases, &graph);
    assert!(
        crossing.is_empty(),
        "a use case imports another (move what they share below them):\n{}",
        crossing.join("\n")
    );
}

#[test]
fn nothing_reaches_past_a_modules_door() {
    // Given the modules with a door, when their top files and every other file are read, then
    // no submodule is public and no path outside names one
    let found = past_doors(&root().join("src"), &DOORS);
    assert!(
        found.is_empty(),
        "past a module's door (expose the item from its top file instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checkers_find_a_use_case_importing_another_and_a_path_past_a_door() {
    // Given a crate whose use case `a` imports use case `b`, and whose door module `d` has a
    // public submodule and a private one that `a` names past the door
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    write(
        src,
        "lib.rs",
        "// 4. Below.\npub mod d;\n// 5. The use cases.\npub mod a;\npub mod b;\n// 6. Top.\npub mod c;\n",
    );
    write(
        src,
        "a.rs",
        "use crate::b::f;\nuse crate::d::inner::g;\nuse crate::d::{g, open::h};\n",
    );
    write(src, "b.rs", "pub fn f() {}\n");
    write(src, "c.rs", "use crate::a::x;\n");
    write(
        src,
        "d/mod.rs",
        "mod inner;\npub mod open;\npub use inner::g;\n",
    );
    write(src, "d/inner.rs", "pub fn g() {}\n");
    write(src, "d/open.rs", "\n");
    // When both checkers read it
    let use_cases = layer(&src.join("lib.rs"), USE_CASES);
    let crossing = crossing_imports(&use_cases, &imports(src));
    let past = past_doors(src, &["d"]);
    // Then a -> b is found (c, on top, may import a), and so are both ways past d's door
    assert_eq!(use_cases, ["a", "b"]);
    assert_eq!(crossing.len(), 1, "{crossing:?}");
    assert!(crossing[0].starts_with("  a -> b"), "{crossing:?}");
    assert_eq!(past.len(), 3, "{past:?}");
    assert!(
        past.iter().any(|p| p.contains("public submodule `open`")),
        "{past:?}"
    );
    assert!(
        past.iter().any(|p| p.contains("a.rs names `d::inner`")),
        "{past:?}"
    );
    assert!(
        past.iter().any(|p| p.contains("a.rs names `d::open`")),
        "{past:?}"
    );
}

#[test]
fn the_products_top_level_modules_form_no_cycle() {
    // Given the product's top-level modules and their imports, when a cycle is looked for,
    // then there is none
    assert_no_cycle(&root().join("src"));
}

#[test]
fn the_emulators_top_level_modules_form_no_cycle() {
    // Given the emulator crate's top-level modules and their imports, when a cycle is looked
    // for, then there is none
    assert_no_cycle(&root().join("crates/github-emulator/src"));
}

/// Fails naming the imports of a cycle between the top-level modules of the crate at `src`.
fn assert_no_cycle(src: &Path) {
    let graph = imports(src);
    let found = cycle(&graph);
    assert_eq!(
        found,
        None,
        "imports in the cycle:\n{}",
        describe(&graph, &found)
    );
}

#[test]
fn the_checker_finds_a_cycle_and_ignores_comments_strings_and_test_code() {
    // Given a crate where `a` imports `b`, `b` climbs back to `a` through `super::super`, and `c`
    // is named only in a comment, a string, a test module and a tests.rs file
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    write(src, "lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write(
        src,
        "a.rs",
        "use crate::{b::One, c as _unused_in_a_string_free_group};\n\
         // crate::c in a comment\nconst S: &str = \"crate::c\";\n\
         #[cfg(test)]\nmod tests {\n    use crate::c::Z;\n}\n",
    );
    write(
        src,
        "b/mod.rs",
        "pub mod inner;\n#[cfg(test)]\nmod tests;\n",
    );
    write(src, "b/inner.rs", "pub fn f() { super::super::a::g() }\n");
    write(src, "b/tests.rs", "use crate::c::Z;\n");
    write(src, "c.rs", "pub struct Z;\n");
    // When its imports are read and a cycle is looked for
    let graph = imports(src);
    // Then a -> b -> a is found, `c` is an import of `a` only through the real group import,
    // and `b` imports nothing but `a`
    assert_eq!(cycle(&graph), Some(vec!["a".into(), "b".into()]));
    assert_eq!(targets(&graph, "a"), ["b", "c"]);
    assert_eq!(targets(&graph, "b"), ["a"]);
    // And with the layers a, b, c, both of a's imports climb
    let layers = declared_modules(&src.join("lib.rs"));
    assert_eq!(climbing_imports(&layers, &graph).len(), 2);
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write(src: &Path, rel: &str, text: &str) {
    let path = src.join(rel);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder made");
    std::fs::write(path, text).expect("written");
}

fn targets(graph: &Graph, from: &str) -> Vec<String> {
    graph[from].keys().cloned().collect()
}

/// The modules `lib.rs` declares, in order.
fn declared_modules(lib: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(lib).expect("lib.rs readable");
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|l| l.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// The modules `lib.rs` declares in its layer `n` (after a `// n.` comment line).
fn layer(lib: &Path, n: u32) -> Vec<String> {
    let text = std::fs::read_to_string(lib).expect("lib.rs readable");
    let mut current = 0;
    let mut found = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(k) = line
            .strip_prefix("// ")
            .and_then(|l| l.split_once('.'))
            .and_then(|(k, _)| k.parse::<u32>().ok())
        {
            current = k;
        } else if let Some(m) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
        {
            if current == n {
                found.push(m.to_string());
            }
        }
    }
    found
}

/// Each import from one of `group` to another, as "a -> b (files)".
fn crossing_imports(group: &[String], graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for (from, to) in graph.iter().filter(|(m, _)| group.contains(m)) {
        for (target, files) in to.iter().filter(|(t, _)| group.contains(t)) {
            found.push(format!("  {from} -> {target} ({files:?})"));
        }
    }
    found
}

/// The top file of module `m` of the crate at `src`.
fn top_file(src: &Path, m: &str) -> PathBuf {
    let flat = src.join(format!("{m}.rs"));
    if flat.exists() {
        flat
    } else {
        src.join(m).join("mod.rs")
    }
}

/// For each module of `doors`: its public submodules, and each file outside it (test code
/// aside) that names one of its submodules (`crate::m::sub`, or `sub` in a `crate::m::{...}`
/// group).
fn past_doors(src: &Path, doors: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for m in doors {
        let top = std::fs::read_to_string(top_file(src, m)).expect("top file");
        let top = without_test_items(&strip(&top));
        let mut subs = BTreeSet::new();
        for line in top.lines().map(str::trim) {
            let Some((vis, name)) = line.strip_suffix(';').and_then(|l| l.split_once("mod "))
            else {
                continue;
            };
            if !vis.is_empty() && !vis.ends_with(' ') || name.contains(' ') {
                continue;
            }
            if vis.trim().starts_with("pub") {
                found.push(format!("  {m} declares a public submodule `{name}`"));
            }
            subs.insert(name.to_string());
        }
        for file in rust_files(src) {
            let rel = file.strip_prefix(src).expect("inside src");
            let inside = rel.starts_with(m) || rel == Path::new(&format!("{m}.rs"));
            if inside || is_test_file(rel) {
                continue;
            }
            let code = without_test_items(&strip(&std::fs::read_to_string(&file).expect("read")));
            for sub in named_submodules(&code, m) {
                if subs.contains(&sub) {
                    found.push(format!("  {} names `{m}::{sub}`", rel.display()));
                }
            }
        }
    }
    found
}

/// The names a path in `code` goes through below `crate::m`: `sub` of `crate::m::sub::…`, and
/// of `sub::…` in a `crate::m::{...}` group. A name right below the door (`crate::m::item`) is
/// what the door exposes.
fn named_submodules(code: &str, m: &str) -> BTreeSet<String> {
    let needle = format!("crate::{m}::");
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices(&needle) {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + needle.len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let body = &group[..closing(rest).saturating_sub(2).min(group.len())];
                let through = group_heads(group)
                    .into_iter()
                    .filter(|h| body.contains(&format!("{h}::")));
                names.extend(through);
            }
            None => {
                let head = ident(rest);
                if rest[head.len()..].starts_with("::") {
                    names.insert(head);
                }
            }
        }
    }
    names
}

/// Each import of a module declared at or after the importer, as "a -> b (files)".
fn climbing_imports(layers: &[String], graph: &Graph) -> Vec<String> {
    let rank = |m: &str| layers.iter().position(|l| l == m).unwrap_or(usize::MAX);
    let mut climbs = Vec::new();
    for (from, to) in graph {
        for (target, files) in to {
            if rank(target) >= rank(from) {
                climbs.push(format!("  {from} -> {target} ({files:?})"));
            }
        }
    }
    climbs
}

/// The top-level modules of the crate at `src` and what each imports.
fn imports(src: &Path) -> Graph {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("src readable") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        if path.is_dir() || (path.extension().is_some_and(|e| e == "rs") && !is_root(&name)) {
            modules.entry(name).or_default().extend(rust_files(&path));
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut graph = Graph::new();
    for (name, files) in &modules {
        let edges = graph.entry(name.clone()).or_default();
        for file in files {
            let rel = file.strip_prefix(src).expect("inside src");
            if is_test_file(rel) {
                continue;
            }
            let code = without_test_items(&strip(&std::fs::read_to_string(file).expect("read")));
            for target in referenced(&code, depth(rel)) {
                if target != *name && names.contains(&target) {
                    let shown = rel.display().to_string();
                    edges.entry(target).or_default().insert(shown);
                }
            }
        }
    }
    graph
}

fn is_root(name: &str) -> bool {
    name == "lib" || name == "main"
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).expect("folder readable") {
        let p = entry.expect("entry").path();
        if p.is_dir() {
            files.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            files.push(p);
        }
    }
    files
}

fn is_test_file(rel: &Path) -> bool {
    rel.file_name().is_some_and(|f| f == "tests.rs")
        || rel.components().any(|c| c.as_os_str() == "tests")
}

/// How deep the file's module is: `a.rs` and `a/mod.rs` are 1, `a/b.rs` is 2.
fn depth(rel: &Path) -> usize {
    let parts = rel.components().count();
    if rel.file_name().is_some_and(|f| f == "mod.rs") {
        parts - 1
    } else {
        parts
    }
}

/// The first path segment after each `crate::` (and each item of a `crate::{...}` group), and
/// after each `super::` chain that reaches the crate root from a module `depth` deep.
fn referenced(code: &str, depth: usize) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            found.extend(group_heads(group));
        } else {
            found.insert(ident(rest));
        }
    }
    let mut at = 0;
    while let Some(i) = code[at..].find("super::").map(|i| i + at) {
        let mut rest = &code[i..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        if climbs >= depth {
            found.insert(ident(rest));
        }
        at = code.len() - rest.len();
    }
    found.retain(|m| !m.is_empty());
    found
}

/// The leading identifier of `text`.
fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The first segment of each item of a `{...}` group (the text after its `{`).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let (mut level, mut start) = (0, true);
    for (i, c) in group.char_indices() {
        match c {
            '{' => level += 1,
            '}' if level == 0 => break,
            '}' => level -= 1,
            ',' if level == 0 => start = true,
            c if start && (c.is_alphanumeric() || c == '_') => {
                heads.push(ident(&group[i..]));
                start = false;
            }
            _ => {}
        }
    }
    heads
}

/// `code` with comments, string and character literals blanked (a string becomes `""`).
fn strip(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &code[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some(len) = raw_string(rest, i == 0 || !is_ident_byte(b[i - 1])) {
            out.push_str("\"\"");
            i += len;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if let Some(len) = char_literal(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let c = rest.chars().next().expect("a char");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of a raw string literal (`r"..."`, `r#"..."#`) at the start of `text`.
fn raw_string(text: &str, at_word_start: bool) -> Option<usize> {
    let after_r = text.strip_prefix('r').filter(|_| at_word_start)?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let end = format!("\"{}", "#".repeat(hashes));
    let close = body.find(&end)?;
    Some(1 + hashes + 1 + close + end.len())
}

/// The length of a character literal (`'a'`, `'\n'`, `'\u{1F600}'`) at the start of `text`; a
/// lifetime is none.
fn char_literal(text: &str) -> Option<usize> {
    let body = text.strip_prefix('\'')?;
    let len = if body.starts_with('\\') {
        body.find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    (body[len..].starts_with('\'')).then_some(len + 2)
}

/// `code` without the items marked `#[cfg(test)]` (a `mod x;` line, or a braced item).
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = code;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let item = &rest[i + MARK.len()..];
        let (brace, semi) = (item.find('{'), item.find(';'));
        let end = match (brace, semi) {
            (_, Some(s)) if brace.is_none_or(|b| s < b) => s + 1,
            (Some(b), _) => b + closing(&item[b..]),
            _ => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The length of the balanced `{...}` at the start of `text`.
fn closing(text: &str) -> usize {
    let mut level = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => level += 1,
            '}' => {
                level -= 1;
                if level == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// One cycle of the graph, as the sorted names of a strongly connected set, if any.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    for start in graph.keys() {
        let reach = reachable(graph, start);
        if reach.contains(start) {
            let mut members: Vec<String> = reach
                .into_iter()
                .filter(|m| reachable(graph, m).contains(start))
                .collect();
            members.sort();
            return Some(members);
        }
    }
    None
}

/// Every module reachable from `from` by one import or more.
fn reachable(graph: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&String> = graph
        .get(from)
        .map(|e| e.keys().collect())
        .unwrap_or_default();
    while let Some(m) = todo.pop() {
        if seen.insert(m.clone()) {
            if let Some(edges) = graph.get(m) {
                todo.extend(edges.keys());
            }
        }
    }
    seen
}

/// The imports between the members of `cycle`, for a failure message.
fn describe(graph: &Graph, cycle: &Option<Vec<String>>) -> String {
    let members = cycle.as_deref().unwrap_or_default();
    let mut lines = Vec::new();
    for (from, to) in graph.iter().filter(|(m, _)| members.contains(m)) {
        for (target, files) in to.iter().filter(|(t, _)| members.contains(t)) {
            lines.push(format!("  {from} -> {target} ({files:?})"));
        }
    }
    lines.join("\n")
}
