//! A port on 127.0.0.1 that is certainly closed, for tests of "the server
//! is not there".

use std::io;
use std::net::{Ipv4Addr, SocketAddr};

use tokio::net::TcpSocket;

/// A port on 127.0.0.1 that refuses connections for as long as this value
/// lives: a socket bound to it that never listens. No fixed port is sure to
/// be closed (`:9`, discard, may be served), and a port freed by dropping a
/// listener may be taken again at once; this one stays ours. The socket
/// does not set `SO_REUSEADDR`, so nothing else can bind the port, and the
/// kernel never picks it as a connection's own source port either.
#[derive(Debug)]
pub struct ClosedPort {
    _socket: TcpSocket,
    addr: SocketAddr,
}

impl ClosedPort {
    /// Binds a free port on 127.0.0.1 (and does not listen).
    pub fn new() -> io::Result<Self> {
        let socket = TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
        let addr = socket.local_addr()?;
        Ok(Self {
            _socket: socket,
            addr,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}
