package netlab_test

import (
	"fmt"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// A four-router lab with 50 ms added between router 2 and router 3; a real
// traceroute from the client sees the routers as hops 1–4 and the server as
// hop 5. (Needs root; tests use netlab.UpForTest.)
func ExampleUp() {
	l, err := netlab.Up(netlab.Config{Prefix: "lcex", Hops: 4, TUNLink: 2, Delay: 50 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Down()
	out, err := l.Exec(l.Client(), "traceroute", "-n", l.ServerAddr(false)).CombinedOutput()
	fmt.Println(string(out), err, l.RouterAddrs(false))
}
