//! Conformance of the GitHub emulator (`src/sim`) to GitHub's published OpenAPI description.
//!
//! The `validator_*` tests prove the validator in `tests/support/openapi.rs` both accepts
//! GitHub's own examples and rejects broken variants, so it cannot pass everything silently.
//! It does not test the reconciler's logic.

mod support;

use serde_json::{json, Value};
use support::openapi::{report, Spec, Violation};

const ISSUE: &str = "/repos/{owner}/{repo}/issues/{issue_number}";

fn spec() -> &'static Spec {
    Spec::get()
}

/// Asserts that validation failed with a violation at `path` whose message contains `needle`.
fn assert_violation(result: Result<(), Vec<Violation>>, path: &str, needle: &str) {
    let violations = result.expect_err("the validator accepted a broken value");
    assert!(
        violations
            .iter()
            .any(|v| v.path == path && v.message.contains(needle)),
        "expected a violation at {path} mentioning {needle:?}, got:\n{}",
        report(&violations)
    );
}

fn example(name: &str) -> Value {
    spec().example(name).clone()
}

/// Defects in GitHub's own examples (not in the validator): the repository examples and the
/// collaborator-permission example lack properties their schemas require. These exact violations
/// are tolerated in example checks only, never in the emulator's replies.
const KNOWN_EXAMPLE_DEFECTS: &[(&str, &str)] = &[
    ("$", "missing required property `language`"),
    ("$", "missing required property `has_discussions`"),
    ("$.source", "missing required property `language`"),
    ("$.parent", "missing required property `language`"),
    (
        "$.template_repository",
        "missing required property `language`",
    ),
    ("$.user", "missing required property `role_name`"),
];

/// Passes unless `result` has a violation outside [`KNOWN_EXAMPLE_DEFECTS`].
fn assert_example_ok(what: &str, result: Result<(), Vec<Violation>>) {
    let Err(violations) = result else { return };
    let unexpected: Vec<Violation> = violations
        .into_iter()
        .filter(|v| {
            !KNOWN_EXAMPLE_DEFECTS
                .iter()
                .any(|(p, m)| v.path == *p && v.message == *m)
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "{what} fails:\n{}",
        report(&unexpected)
    );
}

#[test]
fn validator_accepts_githubs_component_examples() {
    // Given GitHub's own examples for the resources the emulator serves
    let pairs = [
        ("issue", "issue"),
        ("issue-comment", "issue-comment"),
        ("label", "label"),
        ("reaction", "reaction"),
        ("full-repository", "full-repository"),
        ("rate-limit-overview", "rate-limit-overview"),
        ("private-user", "private-user"),
    ];
    for (example_name, schema_name) in pairs {
        // When each is validated against its schema
        let result = spec().validate(spec().schema(schema_name), spec().example(example_name));
        // Then it passes
        assert_example_ok(
            &format!("example `{example_name}` against `{schema_name}`"),
            result,
        );
    }
}

#[test]
fn validator_accepts_the_examples_each_served_operation_declares() {
    // Given every example attached to a 2xx reply of an operation the emulator serves
    let mut checked = 0;
    for (method, route) in served_operations() {
        let op = spec().operation(method, route).unwrap();
        for (status, response) in op["responses"].as_object().unwrap() {
            let Ok(code) = status.parse::<u16>() else {
                continue;
            };
            let examples = response.pointer("/content/application~1json/examples");
            for (name, ex) in examples.and_then(Value::as_object).into_iter().flatten() {
                let value = match ex.get("$ref").and_then(Value::as_str) {
                    Some(r) => spec().example(r.rsplit('/').next().unwrap()),
                    None => match ex["value"].get("$ref").and_then(Value::as_str) {
                        Some(r) => spec().example(r.rsplit('/').next().unwrap()),
                        None => &ex["value"],
                    },
                };
                // When it is validated as that operation's reply
                let result = spec().validate_response(method, route, code, Some(value));
                // Then it passes
                assert_example_ok(&format!("{method} {route} {code} example `{name}`"), result);
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} examples found: is this the right spec?"
    );
}

#[test]
fn validator_rejects_a_missing_required_property() {
    // Given GitHub's issue example without its `id`
    let mut issue = example("issue");
    issue.as_object_mut().unwrap().remove("id");
    // When it is validated, Then the missing property is named
    assert_violation(
        spec().validate(spec().schema("issue"), &issue),
        "$",
        "missing required property `id`",
    );
}

#[test]
fn validator_rejects_a_wrong_type() {
    // Given an issue whose number is a string
    let mut issue = example("issue");
    issue["number"] = json!("1347");
    assert_violation(
        spec().validate(spec().schema("issue"), &issue),
        "$.number",
        "expected integer",
    );
}

#[test]
fn validator_rejects_a_fractional_integer() {
    let mut label = example("label");
    label["id"] = json!(1.5);
    assert_violation(
        spec().validate(spec().schema("label"), &label),
        "$.id",
        "expected integer, found number",
    );
}

#[test]
fn validator_rejects_null_where_the_schema_is_not_nullable() {
    // Given an issue with a null title (nullable: only `body` is)
    let mut issue = example("issue");
    issue["title"] = Value::Null;
    issue["body"] = Value::Null;
    // Then only the title is reported
    let violations = spec().validate(spec().schema("issue"), &issue).unwrap_err();
    assert_eq!(violations.len(), 1, "{}", report(&violations));
    assert_violation(Err(violations), "$.title", "not nullable");
}

#[test]
fn validator_reports_the_path_of_nested_violations() {
    // Given an issue whose author's login is a number and whose second label has no name type
    let mut issue = example("issue");
    issue["user"]["login"] = json!(5);
    issue["labels"][0]["name"] = json!(["bug"]);
    let result = spec().validate(spec().schema("issue"), &issue);
    assert_violation(result.clone(), "$.user.login", "expected string");
    // The labels items are a oneOf (string or object): the closest branch's error is reported
    assert_violation(result, "$.labels[0].name", "expected string");
}

#[test]
fn validator_rejects_a_value_outside_an_enum() {
    let mut reaction = example("reaction");
    reaction["content"] = json!("thumbsup");
    assert_violation(
        spec().validate(spec().schema("reaction"), &reaction),
        "$.content",
        "expected one of",
    );
}

#[test]
fn validator_checks_date_time_and_uri_formats() {
    let mut comment = example("issue-comment");
    comment["created_at"] = json!("yesterday");
    comment["html_url"] = json!("/octocat/Hello-World/issues/1347#issuecomment-1");
    let result = spec().validate(spec().schema("issue-comment"), &comment);
    assert_violation(result.clone(), "$.created_at", "RFC 3339");
    assert_violation(result, "$.html_url", "absolute URI");
}

#[test]
fn validator_rejects_unknown_properties_when_additional_properties_is_false() {
    let mut user = example("private-user");
    // Given a user with only the properties public-user declares, plus one it does not
    let declared = spec().schema("public-user")["properties"]
        .as_object()
        .unwrap();
    user.as_object_mut()
        .unwrap()
        .retain(|k, _| declared.contains_key(k));
    assert!(spec().validate(spec().schema("public-user"), &user).is_ok());
    user["user_view_type"] = json!("public");
    user["surprise"] = json!(true);
    assert_violation(
        spec().validate(spec().schema("public-user"), &user),
        "$.surprise",
        "additionalProperties",
    );
}

#[test]
fn validator_requires_exactly_one_one_of_alternative() {
    // Given a oneOf whose two alternatives both accept strings
    let schema = json!({ "oneOf": [{ "type": "string" }, { "type": "string", "nullable": true }] });
    // Then a string matches both, which oneOf forbids, and a number matches neither
    assert_violation(spec().validate(&schema, &json!("x")), "$", "exactly one");
    assert_violation(spec().validate(&schema, &json!(1)), "$", "matches none");
    // And null matches only the nullable one
    assert!(spec().validate(&schema, &Value::Null).is_ok());
}

#[test]
fn validator_follows_the_discriminator_of_a_one_of() {
    // Given GET /user's reply, a oneOf of private-user and public-user keyed by user_view_type
    let mut user = example("private-user");
    user["user_view_type"] = json!("private");
    assert!(spec()
        .validate_response("GET", "/user", 200, Some(&user))
        .is_ok());
    // When the discriminator says public but private fields are present
    user["user_view_type"] = json!("public");
    // Then the public-user schema is applied and rejects them
    assert_violation(
        spec().validate_response("GET", "/user", 200, Some(&user)),
        "$.two_factor_authentication",
        "additionalProperties",
    );
}

#[test]
fn validator_rejects_a_status_the_operation_does_not_declare() {
    let result = spec().validate_response("GET", ISSUE, 418, Some(&json!({})));
    assert_violation(result, "$", "does not declare status 418");
}

#[test]
fn validator_follows_response_refs_to_githubs_error_schemas() {
    // Given GET issue's 404, declared as a $ref to components/responses/not_found (basic-error)
    let error = json!({ "message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404" });
    assert!(spec()
        .validate_response("GET", ISSUE, 404, Some(&error))
        .is_ok());
    // When the message has the wrong type, Then the referenced schema rejects it
    let broken = json!({ "message": 404, "documentation_url": "https://docs.github.com/rest" });
    assert_violation(
        spec().validate_response("GET", ISSUE, 404, Some(&broken)),
        "$.message",
        "expected string",
    );
    // And a 304, declared without a body, takes none
    assert!(spec().validate_response("GET", ISSUE, 304, None).is_ok());
}

#[test]
fn validator_rejects_a_body_where_none_is_declared() {
    let route = "/repos/{owner}/{repo}/issues/comments/{comment_id}";
    assert!(spec().validate_response("DELETE", route, 204, None).is_ok());
    assert_violation(
        spec().validate_response("DELETE", route, 204, Some(&json!({}))),
        "$",
        "declares no body",
    );
}

#[test]
fn validator_matches_routes_whatever_their_parameter_names() {
    let by_spec_names = spec()
        .operation("GET", "/repos/{owner}/{repo}/labels/{name}")
        .unwrap();
    let by_other_names = spec()
        .operation("get", "/repos/{o}/{r}/labels/{label}")
        .unwrap();
    assert_eq!(by_spec_names["operationId"], by_other_names["operationId"]);
    assert!(spec()
        .operation("GET", "/repos/{owner}/{repo}/nonsense")
        .is_err());
}

#[test]
fn validator_loading_a_missing_spec_is_an_error_that_says_how_to_install_it() {
    let err = Spec::from_path(std::path::Path::new("/nonexistent/api.github.com.json"))
        .err()
        .unwrap();
    assert!(err.contains("cannot read"), "{err}");
    let panic = std::panic::catch_unwind(|| {
        support::openapi::load_or_panic(std::path::Path::new("/nonexistent.json"))
    })
    .err()
    .unwrap();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains(".ci/install-fixtures.sh"), "{message}");
}

/// Every (method, spec route) the emulator serves, for the example checks.
fn served_operations() -> Vec<(&'static str, &'static str)> {
    vec![
        ("GET", "/repos/{owner}/{repo}"),
        ("GET", "/repos/{owner}/{repo}/issues"),
        ("POST", "/repos/{owner}/{repo}/issues"),
        ("GET", ISSUE),
        ("PATCH", ISSUE),
        (
            "GET",
            "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        ),
        (
            "POST",
            "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        ),
        ("GET", "/repos/{owner}/{repo}/issues/comments"),
        ("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
        (
            "PATCH",
            "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        ),
        (
            "DELETE",
            "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        ),
        ("GET", "/repos/{owner}/{repo}/labels"),
        ("POST", "/repos/{owner}/{repo}/labels"),
        ("GET", "/repos/{owner}/{repo}/labels/{name}"),
        ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
        ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
        ("PUT", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
        (
            "DELETE",
            "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
        ),
        (
            "GET",
            "/repos/{owner}/{repo}/issues/{issue_number}/reactions",
        ),
        (
            "POST",
            "/repos/{owner}/{repo}/issues/{issue_number}/reactions",
        ),
        (
            "GET",
            "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        ),
        (
            "POST",
            "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        ),
        (
            "GET",
            "/repos/{owner}/{repo}/collaborators/{username}/permission",
        ),
        ("GET", "/user"),
        ("GET", "/rate_limit"),
    ]
}
