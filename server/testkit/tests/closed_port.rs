//! `ClosedPort`: a port the test owns, which refuses every connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rein_testkit::ClosedPort;

#[tokio::test]
async fn a_closed_port_refuses_connections_and_cannot_be_taken() {
    let closed = ClosedPort::new().unwrap();
    for _ in 0..3 {
        let error = tokio::net::TcpStream::connect(closed.addr())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::ConnectionRefused);
    }
    // Nothing else may start listening there while the test holds it
    // (std's listener sets SO_REUSEADDR, which does not get past it).
    let taken = std::net::TcpListener::bind(closed.addr()).unwrap_err();
    assert_eq!(taken.kind(), std::io::ErrorKind::AddrInUse);
    assert!(closed.url().starts_with("http://127.0.0.1:"));
}
