//! The rules ARCHITECTURE.md states, kept by a test (as rust-analyzer's `tidy` keeps its own):
//! leaf modules import nothing above them, the workspace's crates stand without the `hearth`
//! crate (but the tests' support, `hearth-testkit`), no source file passes the line budget,
//! and the code map names what exists and misses nothing. Each failure names the file and the
//! fix.

use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A file's lines that are code: comments (`//`, `///`, `//!`) left out, and what string
/// literals on a line hold blanked (`"hearth::agent: x"` in a test is no import).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, without_strings(l)))
}

/// `line` with the inside of each `"…"` literal removed.
fn without_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let (mut inside, mut escaped) = (false, false);
    for c in line.chars() {
        if inside {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => {
                    inside = false;
                    out.push(c);
                }
                _ => escaped = false,
            }
        } else {
            if c == '"' {
                inside = true;
            }
            out.push(c);
        }
    }
    out
}

/// `src/NAME.rs` or the files of `src/NAME/`.
fn module_files(name: &str) -> Vec<PathBuf> {
    let file = root().join("src").join(format!("{name}.rs"));
    let dir = root().join("src").join(name);
    let mut files = Vec::new();
    if file.is_file() {
        files.push(file);
    }
    if dir.is_dir() {
        files.extend(rust_files(&dir));
    }
    assert!(
        !files.is_empty(),
        "the leaf module {name} is gone: take it out of LEAVES in tests/tidy.rs"
    );
    files
}

/// The modules everything else builds on: they import only each other (and the parser
/// crate `lib.rs` re-exports as `preset`, `speech`, `toolcall`).
const LEAVES: [&str; 8] = [
    "bounded",
    "config",
    "cpu",
    "logs",
    "models",
    "onnx",
    "secret",
    "speech_models",
];
const REEXPORTED_CRATES: [&str; 3] = ["preset", "speech", "toolcall"];

#[test]
fn leaf_modules_import_nothing_above_them() {
    let mut upward = Vec::new();
    for leaf in LEAVES {
        for file in module_files(leaf) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in code_lines(&text) {
                for (at, _) in line.match_indices("crate::") {
                    let name: String = line[at + "crate::".len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !LEAVES.contains(&name.as_str())
                        && !REEXPORTED_CRATES.contains(&name.as_str())
                    {
                        upward.push(format!(
                            "{}:{n}: crate::{name} ({})",
                            file.strip_prefix(root()).unwrap().display(),
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "a leaf module imports from a module above it; move what it needs down into a leaf \
         (as `config::HistoryMode` was), or pass it in:\n{}",
        upward.join("\n")
    );
}

/// The crates under `crates/` that sit above hearth: its tests' and benches' support, a
/// dev-dependency only.
const ABOVE_HEARTH: [&str; 1] = ["hearth-testkit"];

#[test]
fn the_workspace_crates_stand_without_hearth() {
    let crates = root().join("crates");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        if dir
            .file_name()
            .is_some_and(|n| ABOVE_HEARTH.iter().any(|a| n == *a))
        {
            continue;
        }
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let depends = manifest.lines().any(|l| {
            let l = l.trim_start();
            ["hearth ", "hearth=", "hearth."]
                .iter()
                .any(|p| l.starts_with(p))
        });
        if depends {
            found.push(format!("{}/Cargo.toml depends on hearth", dir.display()));
        }
        for file in rust_files(&dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in code_lines(&text) {
                if line.contains("hearth::") {
                    found.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a crate under crates/ uses the hearth crate; what it needs belongs in a crate \
         below it:\n{}",
        found.join("\n")
    );
}

/// No source file is longer than this. The largest today are about 1,300 lines; the budget
/// comes down as they are split (issue #26), never up.
const MAX_LINES: usize = 1_400;
/// Tests and benches: one scene or table per function, so longer files (the largest today
/// about 1,950 lines).
const MAX_TEST_LINES: usize = 2_000;

#[test]
fn no_source_file_passes_the_line_budget() {
    let mut long = Vec::new();
    for (dir, budget) in [
        ("src", MAX_LINES),
        ("crates", MAX_LINES),
        ("examples", MAX_LINES),
        ("tests", MAX_TEST_LINES),
        ("benches", MAX_TEST_LINES),
    ] {
        for file in rust_files(&root().join(dir)) {
            let n = std::fs::read_to_string(&file).unwrap().lines().count();
            // a crate's own tests/ are tests too
            let is_test = file.components().any(|c| c.as_os_str() == "tests");
            if n > if is_test { MAX_TEST_LINES } else { budget } {
                long.push(format!(
                    "{}: {n} lines",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "past the budget ({MAX_LINES} lines, {MAX_TEST_LINES} for tests and benches): split \
         by what each part holds:\n{}",
        long.join("\n")
    );
}

/// The paths the code map's headings name (`### \`src/agent/\`, \`src/bus.rs\``).
fn code_map_paths() -> Vec<String> {
    code_map_sections()
        .into_iter()
        .flat_map(|(paths, _)| paths)
        .collect()
}

#[test]
fn the_code_map_names_what_exists() {
    let missing: Vec<String> = code_map_paths()
        .into_iter()
        .filter(|p| !root().join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map names paths that do not exist; correct its headings: {missing:?}"
    );
}

/// The code map's sections: each heading's paths and the text below it.
fn code_map_sections() -> Vec<(Vec<String>, String)> {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let map = doc
        .split_once("\n## Code map\n")
        .expect("ARCHITECTURE.md has a \"## Code map\" section")
        .1;
    let map = map.split("\n## ").next().unwrap_or(map);
    map.split("\n### ")
        .skip(1)
        .map(|section| {
            let (heading, body) = section.split_once('\n').unwrap_or((section, ""));
            let paths = heading.split('`').skip(1).step_by(2).map(str::to_string);
            (paths.collect(), body.to_string())
        })
        .collect()
}

#[test]
fn every_file_a_code_map_entry_names_exists() {
    let mut stale = Vec::new();
    for (heading, body) in code_map_sections() {
        let dirs: Vec<&String> = heading.iter().filter(|d| d.ends_with('/')).collect();
        if dirs.is_empty() {
            continue;
        }
        // what the entry may name: a file below one of its directories, a file of its
        // heading, or another module of `src/` by its path there
        let mut below = Vec::new();
        for d in &dirs {
            below.extend(rust_files(&root().join(d.as_str())));
        }
        for name in body.split('`').skip(1).step_by(2) {
            let is_file = name.ends_with(".rs")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_/.-".contains(c));
            if !is_file {
                continue;
            }
            let found = below.iter().any(|f| f.ends_with(name))
                || heading.iter().any(|h| h.ends_with(name))
                || root().join("src").join(name).exists()
                || root().join(name).exists();
            if !found {
                stale.push(format!("{name} (under {dirs:?})"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md's code map names files its directory does not hold; rename or drop \
         them: {stale:?}"
    );
}

#[test]
fn the_code_map_misses_no_module_crate_or_directory() {
    let paths = code_map_paths();
    let covered = |p: &str| {
        paths
            .iter()
            .any(|m| m == p || (m.ends_with('/') && p.starts_with(m.as_str())))
    };
    let mut wanted = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            wanted.push(format!("src/{name}/"));
        } else if name.ends_with(".rs") && name != "lib.rs" {
            wanted.push(format!("src/{name}"));
        }
    }
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        wanted.push(format!("crates/{name}/"));
    }
    let unnamed: Vec<String> = wanted.into_iter().filter(|p| !covered(p)).collect();
    assert!(
        unnamed.is_empty(),
        "ARCHITECTURE.md's code map misses these; give each a place under a `### ` heading: \
         {unnamed:?}"
    );
}

/// The sibling modules `file` (in `src/DIR/`) imports: `super::NAME` and
/// `crate::DIR::NAME`, in its code before its tests.
fn sibling_imports(dir: &str, file: &Path, siblings: &[String]) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    for (_, line) in code_lines(code) {
        for prefix in ["super::".to_string(), format!("crate::{dir}::")] {
            for (at, _) in line.match_indices(&prefix) {
                let name: String = line[at + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if siblings.contains(&name) && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    found
}

#[test]
fn no_two_sibling_modules_import_each_other() {
    let mut tangled = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .filter(|p| p.file_stem().is_some_and(|s| s != "mod"))
            .collect();
        let siblings: Vec<String> = files
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        let imports: Vec<Vec<String>> = files
            .iter()
            .map(|f| sibling_imports(&name, f, &siblings))
            .collect();
        for (i, a) in siblings.iter().enumerate() {
            for (j, b) in siblings.iter().enumerate() {
                if i < j && imports[i].contains(b) && imports[j].contains(a) {
                    let (x, y) = if a < b { (a, b) } else { (b, a) };
                    tangled.push(format!("src/{name}/: {x} <-> {y}"));
                }
            }
        }
    }
    assert!(
        tangled.is_empty(),
        "sibling modules that import each other: move what both need into a module below \
         them (as agent/words.rs holds what check, hooks and reading share):\n{}",
        tangled.join("\n")
    );
}

/// Directories whose `mod.rs` (or parent file) only declares and re-exports: their children
/// import from each other, never from it. A directory renovated so joins the list.
const FACADES: [&str; 2] = ["agent", "pipeline/conductor"];

#[test]
fn no_child_of_a_facade_calls_back_into_it() {
    let mut back = Vec::new();
    for dir in FACADES {
        let files: Vec<PathBuf> = std::fs::read_dir(root().join("src").join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .filter(|p| p.file_stem().is_some_and(|s| s != "mod" && s != "tests"))
            .collect();
        let siblings: Vec<String> = files
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(siblings.len() >= 3, "src/{dir}: {siblings:?}");
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for (n, line) in code_lines(code) {
                for (at, _) in line.match_indices("super::") {
                    let name: String = line[at + "super::".len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    // `super::{a, b}` lists are spelled out one module each
                    if !siblings.contains(&name) {
                        back.push(format!("{}:{n}: super::{name}", file.display()));
                    }
                }
            }
        }
    }
    assert!(
        back.is_empty(),
        "children that import from their parent module (it only declares and re-exports: \
         import from the sibling that holds the item):\n{}",
        back.join("\n")
    );
}
