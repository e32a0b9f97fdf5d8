//! The analysis of parsed commands: [`analyze`] finds, in each simple
//! command, the real program behind leading `VAR=value` assignments and the
//! wrappers `env`, `command`, `builtin`, `exec`, `time`, `nice`, `nohup`,
//! `timeout`, `stdbuf` and `xargs`; opens the bodies of `sh -c '…'` (any
//! shell), `eval …` and `find … -exec … ;` as further commands; and marks a
//! program whose name is computed at run time (`$CMD`, `$(…)`, a glob).
//! Each simple command becomes a [`Unit`]; fork bombs are noticed on the
//! whole text.

use super::parse::{MAX_DEPTH, SimpleCommand, Word, parse_at};

/// A simple command after [`analyze`]: where its real program is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    /// All words, wrappers included.
    pub words: Vec<String>,
    /// The index in `words` of the real program; `None` when the command
    /// only assigns variables or redirects.
    pub program: Option<usize>,
    /// The program's name is only known at run time.
    pub program_dynamic: bool,
    pub writes: Vec<String>,
    pub sockets: Vec<String>,
    pub piped_into: bool,
    /// A shell or `eval` whose body was split into further units: it is
    /// checked against deny and ask rules, but needs no allow rule itself.
    pub transparent: bool,
}

impl Unit {
    /// The real program and its arguments.
    pub fn argv(&self) -> &[String] {
        match self.program {
            Some(i) => &self.words[i..],
            None => &[],
        }
    }

    /// The program's file name (`curl` for `/usr/bin/curl`).
    pub fn program_name(&self) -> Option<&str> {
        self.argv().first().map(|p| basename(p))
    }

    /// The command as the model wrote it, quotes removed.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }
}

pub(crate) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// The result of [`analyze`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Analysis {
    pub units: Vec<Unit>,
    pub error: Option<String>,
    /// A function that pipes into itself in the background (`:(){ :|:& };:`).
    pub fork_bomb: bool,
}

/// Parses `src` and finds the real program of every simple command.
pub(crate) fn analyze(src: &str) -> Analysis {
    let mut analysis = Analysis {
        fork_bomb: is_fork_bomb(src),
        ..Analysis::default()
    };
    analyze_into(src, 0, &mut analysis);
    analysis
}

fn analyze_into(src: &str, depth: usize, out: &mut Analysis) {
    let script = parse_at(src, depth);
    if out.error.is_none() {
        out.error = script.error;
    }
    for command in script.commands {
        analyze_command(command, depth, out);
    }
}

pub(crate) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

fn analyze_command(command: SimpleCommand, depth: usize, out: &mut Analysis) {
    let words: Vec<String> = command.words.iter().map(|w| w.text.clone()).collect();
    let program = real_program(&words);
    let program_dynamic = program
        .is_some_and(|i| command.words.get(i).is_some_and(|w| w.dynamic) || words[i].is_empty());
    let mut unit = Unit {
        words,
        program,
        program_dynamic,
        writes: command.writes,
        sockets: command.sockets,
        piped_into: command.piped_into,
        transparent: false,
    };
    if depth < MAX_DEPTH && !program_dynamic {
        let body = unit.program.and_then(|i| body_of(&unit.words[i..]));
        match body {
            Some(Body::Script(src)) => {
                unit.transparent = true;
                out.units.push(unit);
                analyze_into(&src, depth + 1, out);
                return;
            }
            Some(Body::Words(words)) => {
                out.units.push(unit);
                let nested = SimpleCommand {
                    words: words
                        .into_iter()
                        .map(|text| Word {
                            text,
                            ..Word::default()
                        })
                        .collect(),
                    ..SimpleCommand::default()
                };
                analyze_command(nested, depth + 1, out);
                return;
            }
            None => {}
        }
    }
    out.units.push(unit);
}

enum Body {
    /// `sh -c SCRIPT`, `eval WORDS…`, `env -S STRING`: shell text to parse.
    Script(String),
    /// `find … -exec CMD… ;`: a command given as words.
    Words(Vec<String>),
}

/// The commands a program runs from its arguments.
fn body_of(argv: &[String]) -> Option<Body> {
    let name = basename(argv.first()?);
    let args = &argv[1..];
    if SHELLS.contains(&name) {
        let mut has_c = false;
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            if arg == "--" {
                i += 1;
                break;
            }
            if arg == "-o" || arg == "+o" || arg == "-O" || arg == "+O" {
                i += 2;
                continue;
            }
            if let Some(flags) = arg.strip_prefix('-').filter(|f| !f.starts_with('-')) {
                has_c |= flags.contains('c');
            } else if !arg.starts_with('-') && !arg.starts_with('+') {
                break;
            }
            i += 1;
        }
        return (has_c && i < args.len()).then(|| Body::Script(args[i].clone()));
    }
    if name == "env" {
        let at = args
            .iter()
            .position(|a| a.starts_with("-S") || a.starts_with("--split-string"))?;
        let flag = &args[at];
        let (first, rest) = if flag == "-S" || flag == "--split-string" {
            (
                args.get(at + 1)?.clone(),
                args.get(at + 2..).unwrap_or_default(),
            )
        } else if let Some(value) = flag.strip_prefix("--split-string=") {
            (value.to_owned(), &args[at + 1..])
        } else {
            (flag[2..].to_owned(), &args[at + 1..])
        };
        let mut script = first;
        for arg in rest {
            script.push(' ');
            script.push_str(arg);
        }
        return Some(Body::Script(script));
    }
    if name == "eval" {
        return Some(Body::Script(args.join(" ")));
    }
    if name == "find" {
        let start = args
            .iter()
            .position(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))?;
        let words: Vec<String> = args[start + 1..]
            .iter()
            .take_while(|a| *a != ";" && *a != "+")
            .cloned()
            .collect();
        return (!words.is_empty()).then_some(Body::Words(words));
    }
    None
}

/// Skips assignments and wrappers; the index of the real program.
fn real_program(words: &[String]) -> Option<usize> {
    let mut i = 0;
    loop {
        while words.get(i).is_some_and(|w| is_assignment(w)) {
            i += 1;
        }
        let program = basename(words.get(i)?);
        let args = &words[i + 1..];
        let skip = match program {
            "env" => {
                let splits = args
                    .iter()
                    .take_while(|a| a.starts_with('-'))
                    .any(|a| a.starts_with("-S") || a.starts_with("--split-string"));
                if splits {
                    // `env -S 'prog args'`: its body is opened by `body_of`.
                    return Some(i);
                }
                skip_options(args, &["-u", "--unset", "-C", "--chdir"])
            }
            "command" => {
                if args
                    .iter()
                    .take_while(|a| a.starts_with('-'))
                    .any(|a| a.contains('v') || a.contains('V'))
                {
                    // `command -v x` only looks `x` up.
                    return Some(i);
                }
                skip_options(args, &[])
            }
            "builtin" | "nohup" => 0,
            "exec" => skip_options(args, &["-a"]),
            "time" => skip_options(args, &["-f", "--format", "-o", "--output"]),
            "nice" => skip_options(args, &["-n", "--adjustment"]),
            "stdbuf" => skip_options(args, &["-i", "-o", "-e"]),
            "timeout" => {
                let options = skip_options(args, &["-s", "--signal", "-k", "--kill-after"]);
                // Then the duration.
                options + usize::from(args.len() > options)
            }
            "xargs" => skip_options(
                args,
                &[
                    "-a",
                    "--arg-file",
                    "-d",
                    "--delimiter",
                    "-E",
                    "-I",
                    "-L",
                    "--max-lines",
                    "-n",
                    "--max-args",
                    "-P",
                    "--max-procs",
                    "-s",
                    "--max-chars",
                ],
            ),
            _ => return Some(i),
        };
        if i + 1 + skip >= words.len() {
            // A wrapper with nothing to run (`env`, `time`) is the program.
            return Some(i);
        }
        i += 1 + skip;
    }
}

/// How many leading words of `args` are options (with their values) of a
/// wrapper. `with_value` lists options that take the next word as value
/// (`-n 5`); attached forms (`-n5`, `--max-args=5`) are one word.
fn skip_options(args: &[String], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            return i + 1;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if with_value.contains(&arg.as_str()) {
            i += 2;
        } else {
            i += 1;
        }
    }
    i.min(args.len())
}

fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else {
        return false;
    };
    let name = word[..eq].trim_end_matches('+');
    let name = name.split('[').next().unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A function definition whose body pipes the function into itself.
fn is_fork_bomb(src: &str) -> bool {
    let compact: String = src.chars().filter(|c| !c.is_whitespace()).collect();
    let mut from = 0;
    while let Some(found) = compact[from..].find("(){") {
        let at = from + found;
        let name_start = compact[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
            .last()
            .map_or(at, |(i, _)| i);
        let name = &compact[name_start..at];
        let rest = &compact[at + 3..];
        let body = rest.find('}').map_or(rest, |end| &rest[..end]);
        if !name.is_empty() && body.contains(&format!("{name}|{name}")) {
            return true;
        }
        from = at + 3;
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn programs(src: &str) -> Vec<String> {
        let analysis = analyze(src);
        analysis
            .units
            .iter()
            .map(|u| {
                let mut s = u.argv().join("·");
                if u.transparent {
                    s.insert_str(0, "(transparent) ");
                }
                if u.program_dynamic {
                    s.insert_str(0, "(dynamic) ");
                }
                s
            })
            .collect()
    }

    #[test]
    fn wrappers_and_assignments_are_skipped() {
        for (src, want) in [
            ("FOO=1 BAR=2 curl x", vec!["curl·x"]),
            ("env FOO=1 curl x", vec!["curl·x"]),
            ("env -i -u HOME FOO=1 curl x", vec!["curl·x"]),
            ("command curl x", vec!["curl·x"]),
            ("command -v curl", vec!["command·-v·curl"]),
            ("time -p nice -n 5 curl x", vec!["curl·x"]),
            ("timeout 10 curl x", vec!["curl·x"]),
            ("timeout -s KILL 10s curl x", vec!["curl·x"]),
            ("nohup exec curl x", vec!["curl·x"]),
            (
                "find . -name '*.rs' | xargs -n 1 -I{} rm -rf {}",
                vec!["find·.·-name·*.rs", "rm·-rf·{}"],
            ),
            ("xargs -0 -n1 curl", vec!["curl"]),
            ("FOO=1", vec![""]),
            ("/usr/bin/env curl x", vec!["curl·x"]),
            ("$CMD x", vec!["(dynamic) $CMD·x"]),
            (
                "$(which curl) x",
                vec!["which·curl", "(dynamic) $(which curl)·x"],
            ),
            ("/usr/bin/cu* x", vec!["(dynamic) /usr/bin/cu*·x"]),
            ("[ -f x ] && echo y", vec!["[·-f·x·]", "echo·y"]),
        ] {
            assert_eq!(programs(src), want, "{src}");
        }
    }

    #[test]
    fn bodies_are_opened() {
        for (src, want) in [
            (
                "sh -c 'curl x | sh'",
                vec!["(transparent) sh·-c·curl x | sh", "curl·x", "sh"],
            ),
            (
                r#"bash -lc "cargo test && wget y""#,
                vec![
                    "(transparent) bash·-lc·cargo test && wget y",
                    "cargo·test",
                    "wget·y",
                ],
            ),
            ("bash script.sh", vec!["bash·script.sh"]),
            ("eval 'curl x'", vec!["(transparent) eval·curl x", "curl·x"]),
            (
                "find . -exec rm -rf {} \\;",
                vec!["find·.·-exec·rm·-rf·{}·;", "rm·-rf·{}"],
            ),
            (
                "xargs sh -c 'curl $0'",
                vec!["(transparent) sh·-c·curl $0", "curl·$0"],
            ),
            (
                "env -S 'curl x' y",
                vec!["(transparent) env·-S·curl x·y", "curl·x·y"],
            ),
            (
                "env -i --split-string='curl x'",
                vec!["(transparent) env·-i·--split-string=curl x", "curl·x"],
            ),
        ] {
            assert_eq!(programs(src), want, "{src}");
        }
    }

    #[test]
    fn fork_bombs() {
        assert!(analyze(":(){ :|:& };:").fork_bomb);
        assert!(analyze("bomb() { bomb | bomb & }; bomb").fork_bomb);
        assert!(!analyze("f() { echo hi; }; f | f").fork_bomb);
    }
}
