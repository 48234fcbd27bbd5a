//! When `ping mcp` lists the inventories at once on connections of their own (lanes): only
//! across a link whose round trip the kernel measured as far, never on loopback, whatever
//! the server's speed or the machine's load. Connections are the fake server's accepted
//! count.

use std::net::SocketAddr;
use std::time::Duration;

use crate::netns::{self, FAR_ADDR, FAR_BIND, FarLink};
use crate::util::run;
use agenthealth_testkit::fake_mcp::{Action, FakeServer, Fault, preset};

/// A server slow to answer (30 ms per POST) on loopback: one connection, since its answer
/// time is no round trip a lane saves (before the kernel's round trip decided, it got three).
#[test]
fn a_slow_server_on_loopback_gets_one_connection() {
    let cfg = preset("modern")
        .unwrap_or_default()
        .with_fault(Fault::post(Action::Delay(Duration::from_millis(30))));
    let server = FakeServer::start(cfg);
    let o = run(&["ping", "mcp", &server.url()]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(server.connections(), 1);
}

/// Across a link the kernel sees as 40 ms (tun_delay.py, 20 ms each way): the inventories go
/// out at once, resources and prompts on a connection each.
#[test]
fn across_a_far_link_the_inventories_go_out_at_once() {
    netns::run_inside("lanes::far_side");
}

#[test]
#[ignore = "runs inside the network namespace that across_a_far_link_the_inventories_go_out_at_once makes"]
fn far_side() {
    netns::inside();
    let _link = FarLink::up(20);
    let bind = SocketAddr::from((FAR_BIND, 0));
    let server = FakeServer::try_start_at(preset("modern").unwrap_or_default(), bind, None)
        .expect("listen on the far side");
    let url = format!("http://{FAR_ADDR}:{}/mcp", server.port());
    let o = run(&["ping", "mcp", &url]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(server.connections(), 3);
}
