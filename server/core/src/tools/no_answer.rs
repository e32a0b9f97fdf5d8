//! A review nobody answered in time. It is not a rejection: the user may
//! be away, and a coffee break must not rule out the right fix. The model
//! hears that the change was not applied and nothing else; the task stops
//! waiting for the user (resumable), with the reason in the user's words.

use std::time::Duration;

use super::ToolOutput;

/// What was put to the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proposed {
    Edit,
    Creation,
}

/// The result of a change whose review went unanswered for `waited`.
pub fn review_unanswered(path: &str, proposed: Proposed, waited: Duration) -> ToolOutput {
    let waited = in_words(waited);
    let (what, not_done) = match proposed {
        Proposed::Edit => (format!("this edit to {path}"), "applied"),
        Proposed::Creation => (format!("creating {path}"), "created"),
    };
    ToolOutput::error(format!(
        "The user did not answer the review of {what} within {waited}, so it was not {not_done}. This is not a rejection: the user may be away. The task pauses until the user comes back; when it goes on, propose this change again if it is still what is needed."
    ))
    .unanswered(super::Waiting {
        cause: rein_protocol::StopCause::UnansweredReview,
        reason: format!(
            "No answer from you in {waited}; the review of {path} is still open — resume the task to see it again"
        ),
    })
}

/// "10 minutes", "1 minute", "90 seconds", "1 second": whole minutes
/// when the time is a whole number of them, else seconds (rounded).
pub fn in_words(d: Duration) -> String {
    let secs = d.as_secs_f64().round() as u64;
    let plural = |n: u64, unit: &str| {
        if n == 1 {
            format!("1 {unit}")
        } else {
            format!("{n} {unit}s")
        }
    };
    if secs >= 60 && secs.is_multiple_of(60) {
        plural(secs / 60, "minute")
    } else {
        plural(secs, "second")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_said_in_minutes_or_seconds() {
        let said: Vec<String> = [0.4, 1.0, 2.0, 59.6, 60.0, 90.0, 600.0, 3600.0]
            .into_iter()
            .map(|s| in_words(Duration::from_secs_f64(s)))
            .collect();
        expect_test::expect![[r#"
            [
                "0 seconds",
                "1 second",
                "2 seconds",
                "1 minute",
                "1 minute",
                "90 seconds",
                "10 minutes",
                "60 minutes",
            ]
        "#]]
        .assert_debug_eq(&said);
    }

    #[test]
    fn an_unanswered_review_is_not_a_rejection() {
        let out = review_unanswered("app.py", Proposed::Edit, Duration::from_secs(600));
        assert!(out.is_error);
        expect_test::expect![[r#"
            The user did not answer the review of this edit to app.py within 10 minutes, so it was not applied. This is not a rejection: the user may be away. The task pauses until the user comes back; when it goes on, propose this change again if it is still what is needed.
            No answer from you in 10 minutes; the review of app.py is still open — resume the task to see it again
        "#]]
        .assert_eq(&format!(
            "{}\n{}\n",
            out.content,
            out.unanswered.as_ref().map(|w| w.reason.as_str()).unwrap_or_default()
        ));
        assert_eq!(
            out.unanswered.map(|w| w.cause),
            Some(rein_protocol::StopCause::UnansweredReview)
        );
        let created = review_unanswered("new.py", Proposed::Creation, Duration::from_secs(5));
        assert!(
            created
                .content
                .starts_with("The user did not answer the review of creating new.py within 5 seconds, so it was not created."),
            "{}",
            created.content
        );
    }
}
