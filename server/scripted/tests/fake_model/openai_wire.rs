//! Exact OpenAI Chat Completions output, streamed and not.

use expect_test::expect;
use rein_scripted::fake_model::{FakeModel, Reply, Scenario, StopReason, Usage};
use serde_json::json;

use crate::support::{describe, event_data, openai, openai_body, serve};

fn text_and_two_tool_calls() -> Reply {
    Reply::empty()
        .thinking("not shown to OpenAI clients")
        .text("Running both.")
        .tool_call("read_file", json!({"path": "cart.py"}))
        .tool_call("run_tests", json!({"target": "tests"}))
}

#[tokio::test]
async fn streams_text_and_two_tool_calls_with_usage() {
    let reply = text_and_two_tool_calls().usage(Usage {
        input: 1200,
        output: 30,
        cache_read: 1000,
        cache_write: 24,
    });
    let server = serve(vec![reply]).await;
    let mut body = openai_body(true);
    body["stream_options"] = json!({"include_usage": true});
    let response = openai(&server, &body).send().await.unwrap();
    expect![[r#"
        200
        content-type: text/event-stream; charset=utf-8
        transfer-encoding: chunked
        cache-control: no-cache
        connection: keep-alive
        x-request-id: req_fake_0001
        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"Runn"},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"ing "},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"both"},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"."},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_fake_0001","type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"car"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"t.py"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_fake_0002","type":"function","function":{"name":"run_tests","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"ta"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"rget"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\":\"t"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"ests"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":2224,"completion_tokens":30,"total_tokens":2254,"prompt_tokens_details":{"cached_tokens":1000}}}

        data: [DONE]

    "#]].assert_eq(&describe(response).await);
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[tokio::test]
async fn ollama_sends_each_tool_call_whole_at_index_zero() {
    let scenario = Scenario::new()
        .reply(text_and_two_tool_calls())
        .ollama_parallel_tool_calls()
        .text_chunk_chars(64);
    let server = FakeModel::start(scenario).await.unwrap();
    let response = openai(&server, &openai_body(true)).send().await.unwrap();
    expect![[r#"
        200
        content-type: text/event-stream; charset=utf-8
        transfer-encoding: chunked
        cache-control: no-cache
        connection: keep-alive
        x-request-id: req_fake_0001
        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"Running both."},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_fake_0001","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"cart.py\"}"}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_fake_0002","type":"function","function":{"name":"run_tests","arguments":"{\"target\":\"tests\"}"}}]},"logprobs":null,"finish_reason":null}]}

        data: {"id":"chatcmpl-fake0001","object":"chat.completion.chunk","created":<created>,"model":"gpt-test","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

        data: [DONE]

    "#]].assert_eq(&describe(response).await);
}

#[tokio::test]
async fn answers_without_streaming() {
    let reply = text_and_two_tool_calls().usage(Usage {
        input: 1200,
        output: 30,
        cache_read: 1000,
        cache_write: 24,
    });
    let server = serve(vec![reply, Reply::text("Just text.")]).await;
    let with_tools = openai(&server, &openai_body(false)).send().await.unwrap();
    expect![[r#"
        200
        content-type: application/json
        content-length: 592
        connection: keep-alive
        x-request-id: req_fake_0001
        {"id":"chatcmpl-fake0001","object":"chat.completion","created":<created>,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Running both.","refusal":null,"tool_calls":[{"id":"call_fake_0001","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"cart.py\"}"}},{"id":"call_fake_0002","type":"function","function":{"name":"run_tests","arguments":"{\"target\":\"tests\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":2224,"completion_tokens":30,"total_tokens":2254,"prompt_tokens_details":{"cached_tokens":1000}}}"#]].assert_eq(&describe(with_tools).await);
    let text_only = openai(&server, &openai_body(false)).send().await.unwrap();
    expect![[r#"
        200
        content-type: application/json
        content-length: 338
        connection: keep-alive
        x-request-id: req_fake_0002
        {"id":"chatcmpl-fake0002","object":"chat.completion","created":<created>,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Just text.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":23,"completion_tokens":3,"total_tokens":26,"prompt_tokens_details":{"cached_tokens":0}}}"#]].assert_eq(&describe(text_only).await);
}

#[tokio::test]
async fn tool_calls_without_text_have_null_content() {
    let server = serve(vec![Reply::tool_call("run_tests", json!({}))]).await;
    let completion: serde_json::Value = openai(&server, &openai_body(false))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        completion["choices"][0]["message"]["content"],
        serde_json::Value::Null
    );
    assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn stop_reasons_map_to_finish_reasons() {
    let reasons = [
        StopReason::EndTurn,
        StopReason::ToolUse,
        StopReason::MaxTokens,
        StopReason::StopSequence,
        StopReason::PauseTurn,
        StopReason::Refusal,
        StopReason::ModelContextWindowExceeded,
    ];
    let server = serve(reasons.iter().map(|r| Reply::text("x").stop(*r)).collect()).await;
    let mut sent = Vec::new();
    for _ in reasons {
        let text = openai(&server, &openai_body(true))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let finish = event_data(&text)
            .into_iter()
            .find_map(|chunk| {
                chunk["choices"][0]["finish_reason"]
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap();
        sent.push(finish);
    }
    assert_eq!(
        sent,
        [
            "stop",
            "tool_calls",
            "length",
            "stop",
            "stop",
            "content_filter",
            "length"
        ]
    );
}

#[tokio::test]
async fn both_openai_paths_are_served() {
    let server = serve(vec![Reply::text("one"), Reply::text("two")]).await;
    for path in ["/chat/completions", "/v1/chat/completions"] {
        let response = reqwest::Client::new()
            .post(format!("{}{path}", server.base_url()))
            .bearer_auth("sk-test")
            .json(&openai_body(false))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    assert_eq!(server.remaining(), 0);
}
