//! A checker for GraphQL queries and answers against GitHub's published GraphQL schema (npm
//! `@octokit/graphql-schema`, its introspection `schema.json`, installed by
//! `.ci/install-fixtures.sh` into `.ci/vendor`, or named by `THIRDSHIFT_GRAPHQL_SCHEMA`). A
//! missing schema is a panic, never a skip.
//!
//! It reads the subset of GraphQL the tool writes: one operation with variables, fields with
//! literal or variable arguments, nested selections and inline fragments; no named fragments,
//! directives or aliases. A query is checked field by field (every field and argument exists on
//! its type; a variable's declared type is the argument's); an answer value by value (every key
//! selected, no other; nulls only where the schema allows them; scalars of their kind; enum
//! values among the declared ones).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

const DEFAULT_SCHEMA: &str = ".ci/vendor/node_modules/@octokit/graphql-schema/schema.json";

/// A selection: a field (with its arguments as written) or an inline fragment.
#[derive(Debug)]
pub enum Sel {
    Field {
        name: String,
        args: Vec<(String, String)>,
        sub: Vec<Sel>,
    },
    On {
        type_name: String,
        sub: Vec<Sel>,
    },
}

/// A parsed operation: its variables (name without `$`, declared type) and selections.
#[derive(Debug)]
pub struct Operation {
    pub variables: Vec<(String, String)>,
    pub selection: Vec<Sel>,
}

/// The schema's types by name.
pub struct Schema {
    types: BTreeMap<String, Value>,
}

/// The schema, loaded once per test binary.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(Schema::load)
}

impl Schema {
    fn load() -> Schema {
        let path = match std::env::var_os("THIRDSHIFT_GRAPHQL_SCHEMA") {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SCHEMA),
        };
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "GitHub's GraphQL schema is not at {}: {e}. Run `.ci/install-fixtures.sh` to \
                 install it into .ci/vendor, or set THIRDSHIFT_GRAPHQL_SCHEMA.",
                path.display()
            )
        });
        let v: Value = serde_json::from_str(&text).expect("schema.json is JSON");
        let types = v["__schema"]["types"]
            .as_array()
            .expect("__schema.types")
            .iter()
            .map(|t| (t["name"].as_str().unwrap_or("").to_string(), t.clone()))
            .collect();
        Schema { types }
    }

    fn field<'a>(&'a self, type_name: &str, field: &str) -> Option<&'a Value> {
        self.types.get(type_name)?["fields"]
            .as_array()?
            .iter()
            .find(|f| f["name"] == field)
    }

    /// Every way `op` (rooted at `Query`) departs from the schema.
    pub fn check_query(&self, op: &Operation) -> Vec<String> {
        let vars: BTreeMap<&str, &str> = op
            .variables
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let mut out = Vec::new();
        self.check_selection("Query", &op.selection, &vars, &mut out);
        out
    }

    fn check_selection(
        &self,
        on: &str,
        sel: &[Sel],
        vars: &BTreeMap<&str, &str>,
        out: &mut Vec<String>,
    ) {
        for s in sel {
            match s {
                Sel::On { type_name, sub } => {
                    if !self.types.contains_key(type_name) {
                        out.push(format!("no type {type_name} (fragment in {on})"));
                    } else if type_name != on && !self.possible(on, type_name) {
                        out.push(format!("{type_name} is not a possible type of {on}"));
                    }
                    self.check_selection(type_name, sub, vars, out);
                }
                Sel::Field { name, .. } if name == "__typename" => {}
                Sel::Field { name, args, sub } => {
                    let Some(field) = self.field(on, name) else {
                        out.push(format!("{on} has no field {name}"));
                        continue;
                    };
                    for (arg, value) in args {
                        let declared = field["args"]
                            .as_array()
                            .and_then(|a| a.iter().find(|x| x["name"] == arg.as_str()));
                        let Some(declared) = declared else {
                            out.push(format!("{on}.{name} has no argument {arg}"));
                            continue;
                        };
                        if let Some(var) = value.strip_prefix('$') {
                            let want = type_string(&declared["type"]);
                            match vars.get(var) {
                                Some(t) if *t == want => {}
                                other => out.push(format!(
                                    "${var} is {other:?}, {on}.{name}({arg}:) takes {want}"
                                )),
                            }
                        }
                    }
                    let inner = named(&field["type"]);
                    self.check_selection(&inner, sub, vars, out);
                }
            }
        }
    }

    /// Whether `concrete` is among the possible types of interface or union `abstract_`.
    fn possible(&self, abstract_: &str, concrete: &str) -> bool {
        self.types.get(abstract_).is_some_and(|t| {
            t["possibleTypes"]
                .as_array()
                .is_some_and(|p| p.iter().any(|x| x["name"] == concrete))
        })
    }

    /// Every way `data` (the answer's `data`) departs from what `op` selected.
    pub fn check_answer(&self, op: &Operation, data: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.check_object("Query", &op.selection, data, "data", &mut out);
        out
    }

    fn check_object(&self, on: &str, sel: &[Sel], v: &Value, at: &str, out: &mut Vec<String>) {
        let Some(obj) = v.as_object() else {
            out.push(format!("{at}: {on} must be an object, got {v}"));
            return;
        };
        let mut allowed = Vec::new();
        for s in sel {
            match s {
                Sel::Field { name, sub, .. } => {
                    allowed.push(name.clone());
                    let Some(value) = obj.get(name) else {
                        out.push(format!("{at}.{name}: selected but missing"));
                        continue;
                    };
                    if name == "__typename" {
                        if !value.as_str().is_some_and(|t| self.types.contains_key(t)) {
                            out.push(format!("{at}.__typename: {value} names no type"));
                        }
                        continue;
                    }
                    let Some(field) = self.field(on, name) else {
                        continue; // check_query reports it
                    };
                    let at = format!("{at}.{name}");
                    self.check_value(&field["type"], sub, value, &at, out);
                }
                // a fragment's fields are there only when the object is of its type
                Sel::On { type_name, sub } => {
                    let present = sub.iter().all(|s| match s {
                        Sel::Field { name, .. } => obj.contains_key(name),
                        Sel::On { .. } => true,
                    });
                    for s in sub {
                        if let Sel::Field { name, .. } = s {
                            allowed.push(name.clone());
                        }
                    }
                    if present {
                        self.check_object(type_name, sub, v, at, out);
                    }
                }
            }
        }
        for key in obj.keys() {
            if !allowed.contains(key) {
                out.push(format!("{at}.{key}: not selected"));
            }
        }
    }

    fn check_value(&self, ty: &Value, sub: &[Sel], v: &Value, at: &str, out: &mut Vec<String>) {
        if ty["kind"] == "NON_NULL" {
            if v.is_null() {
                out.push(format!("{at}: null where the schema says non-null"));
                return;
            }
            return self.check_value(&ty["ofType"], sub, v, at, out);
        }
        if v.is_null() {
            return;
        }
        match ty["kind"].as_str().unwrap_or("") {
            "LIST" => match v.as_array() {
                Some(items) => {
                    for (i, item) in items.iter().enumerate() {
                        self.check_value(&ty["ofType"], sub, item, &format!("{at}[{i}]"), out);
                    }
                }
                None => out.push(format!("{at}: must be a list, got {v}")),
            },
            "SCALAR" => {
                let name = ty["name"].as_str().unwrap_or("");
                let ok = match name {
                    "Int" => v.is_i64(),
                    "Float" => v.is_number(),
                    "Boolean" => v.is_boolean(),
                    _ => v.is_string(), // ID, String, and GitHub's custom scalars (BigInt, URI…)
                };
                if !ok {
                    out.push(format!("{at}: {v} is not a {name}"));
                }
            }
            "ENUM" => {
                let name = ty["name"].as_str().unwrap_or("");
                let values = &self.types[name]["enumValues"];
                let known = values
                    .as_array()
                    .is_some_and(|e| e.iter().any(|x| x["name"] == *v));
                if !known {
                    out.push(format!("{at}: {v} is not a value of {name}"));
                }
            }
            _ => {
                let name = ty["name"].as_str().unwrap_or("");
                self.check_object(name, sub, v, at, out);
            }
        }
    }
}

/// A type reference as GraphQL writes it (`[ID!]!`).
fn type_string(ty: &Value) -> String {
    match ty["kind"].as_str() {
        Some("NON_NULL") => format!("{}!", type_string(&ty["ofType"])),
        Some("LIST") => format!("[{}]", type_string(&ty["ofType"])),
        _ => ty["name"].as_str().unwrap_or("").to_string(),
    }
}

/// The named type under any list and non-null wrappers.
fn named(ty: &Value) -> String {
    match ty["kind"].as_str() {
        Some("NON_NULL") | Some("LIST") => named(&ty["ofType"]),
        _ => ty["name"].as_str().unwrap_or("").to_string(),
    }
}

/// Parses the subset of GraphQL described in the module doc. Panics on anything else.
pub fn parse(query: &str) -> Operation {
    let tokens = tokenize(query);
    let mut p = Parser { tokens, at: 0 };
    p.expect("query");
    let mut variables = Vec::new();
    if p.peek() == "(" {
        p.next();
        while p.peek() != ")" {
            let name = p.next().trim_start_matches('$').to_string();
            p.expect(":");
            let mut ty = String::new();
            while !matches!(p.peek(), ")" | "$") && !p.peek().starts_with('$') {
                ty.push_str(&p.next());
            }
            variables.push((name, ty));
        }
        p.next();
    }
    let selection = p.selection();
    Operation {
        variables,
        selection,
    }
}

fn tokenize(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for ch in query.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == '$' || ch == '.' {
            word.push(ch);
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !ch.is_whitespace() && ch != ',' {
                out.push(ch.to_string());
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

struct Parser {
    tokens: Vec<String>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &str {
        self.tokens.get(self.at).map(String::as_str).unwrap_or("")
    }

    fn next(&mut self) -> String {
        self.at += 1;
        self.tokens.get(self.at - 1).cloned().unwrap_or_default()
    }

    fn expect(&mut self, token: &str) {
        let got = self.next();
        assert_eq!(got, token, "GraphQL: expected {token}");
    }

    fn selection(&mut self) -> Vec<Sel> {
        self.expect("{");
        let mut out = Vec::new();
        while self.peek() != "}" {
            let name = self.next();
            if name == "..." {
                self.expect("on");
                let type_name = self.next();
                let sub = self.selection();
                out.push(Sel::On { type_name, sub });
                continue;
            }
            assert!(!name.is_empty(), "GraphQL: unclosed selection");
            let mut args = Vec::new();
            if self.peek() == "(" {
                self.next();
                while self.peek() != ")" {
                    let arg = self.next();
                    self.expect(":");
                    args.push((arg, self.next()));
                }
                self.next();
            }
            let sub = if self.peek() == "{" {
                self.selection()
            } else {
                Vec::new()
            };
            out.push(Sel::Field { name, args, sub });
        }
        self.next();
        out
    }
}
