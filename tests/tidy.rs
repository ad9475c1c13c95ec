//! The rules docs/architecture.md states, kept by a test (as rust-analyzer's `tidy` keeps its
//! own): leaf modules import nothing above them, the workspace's crates stand without the
//! `hearth` crate (but the tests' support, `hearth-testkit`), the core links no native engine,
//! no source file passes the line
//! budget, and the code map names what exists and misses nothing. And the documents' own
//! rules: README.md is short and undated (its figures' dates and builds are in
//! docs/measurements.md), and every relative link in README.md and docs/*.md reaches a file of
//! the repository (and a heading of it, for an anchor). Each failure names the file and the fix.

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

/// The crates whose modules the rules below read, by their source directory: the core and
/// the `hearth` crate above it (each one's `crate::` is its own).
const SOURCE_DIRS: [&str; 2] = ["crates/hearth-core/src", "src"];

/// `DIR/NAME.rs` or the files of `DIR/NAME/`, in whichever source directory holds the module.
fn module_files(name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for src in SOURCE_DIRS {
        let file = root().join(src).join(format!("{name}.rs"));
        let dir = root().join(src).join(name);
        if file.is_file() {
            files.push(file);
        }
        if dir.is_dir() {
            files.extend(rust_files(&dir));
        }
    }
    assert!(
        !files.is_empty(),
        "the leaf module {name} is gone: take it out of LEAVES in tests/tidy.rs"
    );
    files
}

/// The modules everything else builds on: they import only each other (and the parser
/// crate each `lib.rs` re-exports as `preset`, `speech`, `toolcall`). The first five are the
/// core's, the rest the `hearth` crate's.
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

/// The native engines and sound devices: C or C++ built from source or linked (llama.cpp,
/// whisper.cpp, ONNX Runtime, espeak-ng, ALSA). The core links none of them.
const NATIVE: [&str; 12] = [
    "alsa",
    "alsa-sys",
    "cpal",
    "espeak-rs",
    "espeak-rs-sys",
    "llama-cpp-2",
    "llama-cpp-sys-2",
    "ort",
    "ort-sys",
    "piper-rs",
    "whisper-rs",
    "whisper-rs-sys",
];

/// The packages `package` depends on, directly or not, as Cargo.lock resolves them (every
/// version of a name, and every platform's: more than a build links, never less).
fn locked_dependencies(package: &str) -> Vec<String> {
    let lock: toml::Table = read("Cargo.lock").parse().expect("Cargo.lock is TOML");
    let packages = lock["package"]
        .as_array()
        .expect("Cargo.lock lists packages");
    let depends_on = |name: &str| -> Vec<String> {
        packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .flat_map(|p| p.get("dependencies").and_then(|d| d.as_array()).cloned())
            .flatten()
            .filter_map(|d| Some(d.as_str()?.split(' ').next()?.to_string()))
            .collect()
    };
    let mut seen: Vec<String> = Vec::new();
    let mut todo = depends_on(package);
    while let Some(name) = todo.pop() {
        if !seen.contains(&name) {
            todo.extend(depends_on(&name));
            seen.push(name);
        }
    }
    seen
}

#[test]
fn the_core_links_no_native_engine() {
    let deps = locked_dependencies("hearth-core");
    assert!(
        deps.iter().any(|d| d == "ractor"),
        "hearth-core's dependencies were not found in Cargo.lock: {deps:?}"
    );
    let native: Vec<&String> = deps
        .iter()
        .filter(|d| NATIVE.contains(&d.as_str()))
        .collect();
    assert!(
        native.is_empty(),
        "hearth-core depends on a native engine or sound device ({native:?}): what needs it \
         belongs in the hearth crate (src/), behind the core's message protocol"
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

/// The map of the code, its "## Code map" section's headings naming paths from the root.
const ARCHITECTURE: &str = "docs/architecture.md";

/// The paths the code map's headings name (`### \`crates/hearth-core/src/agent/\`, \`src/bus.rs\``).
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
        "{ARCHITECTURE}'s code map names paths that do not exist; correct its headings: {missing:?}"
    );
}

/// The code map's sections: each heading's paths and the text below it.
fn code_map_sections() -> Vec<(Vec<String>, String)> {
    let doc = std::fs::read_to_string(root().join(ARCHITECTURE))
        .unwrap_or_else(|e| panic!("{ARCHITECTURE}: {e}"));
    let map = doc
        .split_once("\n## Code map\n")
        .unwrap_or_else(|| panic!("{ARCHITECTURE} has no \"## Code map\" section"))
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
                || SOURCE_DIRS
                    .iter()
                    .any(|s| root().join(s).join(name).exists())
                || root().join(name).exists();
            if !found {
                stale.push(format!("{name} (under {dirs:?})"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{ARCHITECTURE}'s code map names files its directory does not hold; rename or drop \
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
    for src in SOURCE_DIRS {
        for entry in std::fs::read_dir(root().join(src)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                wanted.push(format!("{src}/{name}/"));
            } else if name.ends_with(".rs") && name != "lib.rs" {
                wanted.push(format!("{src}/{name}"));
            }
        }
    }
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        wanted.push(format!("crates/{name}/"));
    }
    let unnamed: Vec<String> = wanted.into_iter().filter(|p| !covered(p)).collect();
    assert!(
        unnamed.is_empty(),
        "{ARCHITECTURE}'s code map misses these; give each a place under a `### ` heading: \
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

/// The pairs of modules in `dir` (a module directory of `src`) that import each other.
fn tangled_siblings(src: &str, dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
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
    let mut tangled = Vec::new();
    for (i, a) in siblings.iter().enumerate() {
        for (j, b) in siblings.iter().enumerate() {
            if i < j && imports[i].contains(b) && imports[j].contains(a) {
                let (x, y) = if a < b { (a, b) } else { (b, a) };
                tangled.push(format!("{src}/{name}/: {x} <-> {y}"));
            }
        }
    }
    tangled
}

#[test]
fn no_two_sibling_modules_import_each_other() {
    let mut tangled = Vec::new();
    for src in SOURCE_DIRS {
        for entry in std::fs::read_dir(root().join(src)).unwrap() {
            let dir = entry.unwrap().path();
            if dir.is_dir() {
                tangled.extend(tangled_siblings(src, &dir));
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
const FACADES: [&str; 2] = [
    "crates/hearth-core/src/agent",
    "crates/hearth-core/src/conductor",
];

#[test]
fn no_child_of_a_facade_calls_back_into_it() {
    let mut back = Vec::new();
    for dir in FACADES {
        let files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .filter(|p| p.file_stem().is_some_and(|s| s != "mod" && s != "tests"))
            .collect();
        let siblings: Vec<String> = files
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(siblings.len() >= 3, "{dir}: {siblings:?}");
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

/// README.md is what a person reads before running hearth: at most this many lines; the rest
/// is in docs/.
const README_MAX_LINES: usize = 300;

#[test]
fn the_readme_is_short() {
    let n = read("README.md").lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines, more than {README_MAX_LINES}: move reference to docs/guide.md \
         and figures to docs/measurements.md, and link to them"
    );
}

/// `text` read whole, or a panic naming the file.
fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The dates (`YYYY-MM-DD`) in `text`.
fn dates(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    (0..b.len().saturating_sub(9))
        .filter(|&i| {
            (0..10).all(|k| {
                if k == 4 || k == 7 {
                    b[i + k] == b'-'
                } else {
                    digit(i + k)
                }
            }) && !(i > 0 && digit(i - 1))
                && !digit(i + 10)
        })
        .map(|i| text[i..i + 10].to_string())
        .collect()
}

/// The words of `text` that look like a commit: 7 to 40 hex digits with at least one digit and
/// one letter (`8ddf19e`), so that neither a number (`2097152`) nor a word (`defaced`) counts.
/// A sha256 (64 digits) is no commit, but README.md keeps none either.
fn commit_like(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            (7..=40).contains(&w.len())
                && w.chars().all(|c| c.is_ascii_hexdigit())
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_alphabetic())
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_holds_no_dates_or_commit_hashes() {
    let readme = read("README.md");
    let (dates, commits) = (dates(&readme), commit_like(&readme));
    assert!(
        dates.is_empty() && commits.is_empty(),
        "README.md says what is true today: a figure's date and build belong with its run in \
         docs/measurements.md. Dates: {dates:?}; commit hashes: {commits:?}"
    );
}

#[test]
fn the_date_and_commit_rules_see_what_they_should() {
    assert_eq!(dates("on 2026-11-28, not 12026-11-280"), ["2026-11-28"]);
    assert_eq!(
        commit_like("8ddf19e, 1aa3fb3 (2097152 bytes), defaced, x86-64-v3, qwen2.5"),
        ["8ddf19e", "1aa3fb3"]
    );
    assert!(
        commit_like(&"ab12".repeat(16)).is_empty(),
        "a sha256 is no commit"
    );
}

/// README.md and docs/*.md: the documents whose links are checked.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_string());
    docs
}

/// `text`'s lines outside fenced code blocks, each with its inline code spans blanked: a link
/// in an example is no link.
fn prose_lines(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push(line.split('`').step_by(2).collect::<Vec<_>>().join(" "));
        }
    }
    out
}

/// The target of each inline link, `[text](target)` or `[text](target "title")`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            if let Some(end) = rest.find(')') {
                let target = rest[..end].split_whitespace().next().unwrap_or("");
                out.push(target.to_string());
            }
        }
    }
    out
}

/// The anchors of a Markdown file's headings, as GitHub makes them: lower case, spaces as
/// hyphens, every other character but letters, digits, `-` and `_` dropped; a repeated one
/// gets `-1`, `-2`, ….
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let title = line.trim_start_matches('#');
        if fenced || title.len() == line.len() || !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let seen = out
            .iter()
            .filter(|a| {
                **a == slug
                    || a.strip_prefix(&format!("{slug}-"))
                        .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count();
        out.push(if seen == 0 {
            slug
        } else {
            format!("{slug}-{seen}")
        });
    }
    out
}

#[test]
fn the_anchor_rule_slugs_as_github_does() {
    let doc = "# The hearth guide\n## `hearth-stt`'s speed\n```\n# not a heading\n```\n\
               ### The latency budget: `cargo bench --bench voice`\n## Tools\n## Tools\n";
    assert_eq!(
        anchors(doc),
        [
            "the-hearth-guide",
            "hearth-stts-speed",
            "the-latency-budget-cargo-bench---bench-voice",
            "tools",
            "tools-1"
        ]
    );
}

#[test]
fn every_relative_link_in_the_docs_reaches_a_file() {
    let repo = root().canonicalize().unwrap();
    let mut broken = Vec::new();
    for doc in documents() {
        let text = read(&doc);
        let dir = root().join(&doc).parent().unwrap().to_path_buf();
        for target in links(&text) {
            if target.is_empty()
                || ["http://", "https://", "mailto:"]
                    .iter()
                    .any(|s| target.starts_with(s))
            {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                root().join(&doc)
            } else {
                dir.join(path)
            };
            let Ok(found) = file.canonicalize() else {
                broken.push(format!("{doc}: {target}: no such file"));
                continue;
            };
            if !found.starts_with(&repo) {
                broken.push(format!("{doc}: {target}: outside the repository"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if found.extension().is_some_and(|e| e == "md")
                && !anchors(&std::fs::read_to_string(&found).unwrap())
                    .iter()
                    .any(|a| a == anchor)
            {
                broken.push(format!("{doc}: {target}: no heading makes #{anchor}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links in README.md and docs/ that lead nowhere; point each at the file (relative to \
         the document) and heading it means:\n{}",
        broken.join("\n")
    );
}

/// The library crates whose `pub mod`s the rule below holds to account: each one's name in
/// code, its sources, and the files under them that are another crate (a binary's).
const LIBRARIES: [(&str, &str); 7] = [
    ("hearth_core", "crates/hearth-core/src"),
    ("hearth", "src"),
    ("hearth_toolcall", "crates/hearth-toolcall/src"),
    ("hearth_stt", "crates/hearth-stt/src"),
    ("hearth_house", "crates/hearth-house/src"),
    ("hearth_phrases", "crates/hearth-phrases/src"),
    ("wyoming", "crates/wyoming/src"),
];

/// The binaries inside the libraries' source directories (each a crate of its own): `hearth`'s
/// `main.rs` with its commands, and the recognition server's.
const BINARY_SOURCES: [&str; 3] = ["src/main.rs", "src/cmd", "crates/hearth-stt/src/main.rs"];

/// Whether `file` is one of [`BINARY_SOURCES`].
fn in_a_binary(file: &Path) -> bool {
    BINARY_SOURCES
        .iter()
        .any(|b| file.starts_with(root().join(b)))
}

/// Names by which one library's modules are reached through another's, and where: `hearth`
/// re-exports the core's modules and the parser crate as its own (`hearth::agent` anywhere,
/// `crate::agent` in its own code).
const RE_EXPORTS: [(&str, &str, &str); 4] = [
    ("hearth_core", "hearth", ""),
    ("hearth_core", "crate", "src"),
    ("hearth_toolcall", "hearth::toolcall", ""),
    ("hearth_toolcall", "crate::toolcall", "src"),
];

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e` (spaces already out).
fn use_paths(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let (mut depth, mut start) = (0, 0);
    let mut parts = Vec::new();
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        match part.find('{') {
            Some(open) => {
                let close = part.rfind('}').filter(|c| *c > open).unwrap_or(part.len());
                let head = format!("{prefix}{}", &part[..open]);
                use_paths(&part[open + 1..close], &head, out);
            }
            None => out.push(format!("{prefix}{part}")),
        }
    }
}

/// What a file's code names: every `use` tree spelled out, and the code itself (a path
/// written in place, `hearth::tools::gpio::run(..)`), one string to search.
fn named_paths(text: &str) -> String {
    let code: String = code_lines(text)
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let line = line.strip_prefix("pub ").unwrap_or(line);
        let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
        let Some(first) = line.strip_prefix("use ") else {
            continue;
        };
        let mut tree = first.to_string();
        while !tree.contains(';') {
            match lines.next() {
                Some(more) => tree.push_str(more),
                None => break,
            }
        }
        let tree: String = tree
            .split(';')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        use_paths(&tree, "", &mut paths);
    }
    format!("{code}\n{}", paths.join("\n"))
}

/// Whether `text` names `path` as a whole path segment sequence (not `xtools::gpio_pin`).
fn names(text: &str, path: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + path.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == ':' && !text[..at].ends_with("::"))
            && !after.is_some_and(ident)
    })
}

/// Each `pub mod` of a library, as its path from the crate root (`tools::gpio`), with where
/// it is declared.
fn public_modules(src: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in rust_files(&root().join(src)) {
        let rel = file.strip_prefix(root().join(src)).unwrap();
        if in_a_binary(&file) {
            continue;
        }
        let mut module: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code_lines(code) {
            let Some(rest) = line.trim_start().strip_prefix("pub mod ") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let path = module
                .iter()
                .cloned()
                .chain([name])
                .collect::<Vec<_>>()
                .join("::");
            out.push((
                path,
                format!("{}:{n}", file.strip_prefix(root()).unwrap().display()),
            ));
        }
    }
    out
}

/// Every file of another crate that is not a test: the other libraries, the binary, the
/// benches and examples, the test support crate (its code is what tests share, and it names
/// only what they could).
fn consumers_of(src: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = LIBRARIES
        .iter()
        .filter(|(_, s)| *s != src)
        .map(|(_, s)| root().join(s))
        .collect();
    dirs.extend(["benches", "examples", "crates/hearth-testkit/src"].map(|d| root().join(d)));
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        dirs.extend(["benches", "examples"].map(|d| dir.join(d)));
    }
    let own = root().join(src);
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| d.is_dir())
        .flat_map(|d| rust_files(d))
        .filter(|f| !f.starts_with(&own))
        .collect();
    files.extend(rust_files(&own).into_iter().filter(|f| in_a_binary(f)));
    files
}

#[test]
fn every_public_module_is_named_by_another_crate() {
    let mut for_tests_alone = Vec::new();
    let mut counts = Vec::new();
    for (krate, src) in LIBRARIES {
        // each consumer's code, with the names this library's modules go by there
        let consumers: Vec<(String, Vec<String>)> = consumers_of(src)
            .iter()
            .map(|file| {
                let mut roots = vec![krate.to_string()];
                roots.extend(
                    RE_EXPORTS
                        .iter()
                        .filter(|(k, _, within)| {
                            *k == krate && file.starts_with(root().join(within))
                        })
                        .map(|(_, r, _)| r.to_string()),
                );
                (named_paths(&std::fs::read_to_string(file).unwrap()), roots)
            })
            .collect();
        let modules = public_modules(src);
        counts.push(format!("{krate} {}", modules.len()));
        for (path, at) in modules {
            let named = consumers
                .iter()
                .any(|(text, roots)| match path.contains("::") {
                    true => names(text, &path),
                    false => roots.iter().any(|r| names(text, &format!("{r}::{path}"))),
                });
            if !named {
                for_tests_alone.push(format!("{at}: {krate}::{path}"));
            }
        }
    }
    eprintln!("pub mod per crate: {}", counts.join(", "));
    assert!(
        for_tests_alone.is_empty(),
        "public modules no other crate's code names (only tests, or nothing): make each \
         private (`mod`), re-export what others do name, and move its tests beside the \
         code:\n{}",
        for_tests_alone.join("\n")
    );
}

#[test]
fn the_public_module_rule_reads_paths_as_rust_does() {
    let mut paths = Vec::new();
    use_paths("hearth::{agent::{Ask,Turn},tools::gpio}", "", &mut paths);
    assert_eq!(
        paths,
        [
            "hearth::agent::Ask",
            "hearth::agent::Turn",
            "hearth::tools::gpio"
        ]
    );
    let text = named_paths(
        "use hearth::{\n    tools::{gpio, Registry},\n};\n// hearth::wake::stage\nlet t = \"hearth::llm::llama\";\nhearth_stt::server::run();\n",
    );
    assert!(names(&text, "hearth::tools::gpio"));
    assert!(names(&text, "tools::gpio"), "a module inside a path");
    assert!(
        names(&text, "hearth_stt::server"),
        "a path written in place"
    );
    assert!(!names(&text, "wake::stage"), "a comment names nothing");
    assert!(!names(&text, "llm::llama"), "nor does a string");
    assert!(!names("let x = xtools::gpio_pin;", "tools::gpio"));
}
