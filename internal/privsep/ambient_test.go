package privsep

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A service unit gives CAP_NET_RAW to an unprivileged user as an ambient
// capability (systemd's AmbientCapabilities with DynamicUser, emulated
// here with setpriv), not as a file capability: the plain binary, run as
// uid 65534 with CAP_NET_RAW ambient and no_new_privs, separates as the
// cap_net_raw+ep copy does. Before, the helper lost the capability (an
// ambient capability passes execve only while it is inheritable, and
// Separate cleared the inheritable set), and serve could not probe.
func TestSeparateWithAnAmbientCapability(t *testing.T) {
	plain, _ := capCopies(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed (util-linux)")
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs",
		"--inh-caps=-all,+net_raw", "--ambient-caps=-all,+net_raw", "--bounding-set=-all,+net_raw", plain)
	cmd.Env = append(os.Environ(), roleEnv+"=parent")
	cmd.Stdin = strings.NewReader("") // the parent role waits for its input to close
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, want := range []string{"OK caps", "OK threads", "OK dumpable", "OK icmp", "OK icmpv6", "OK tcp", "OK udp", "OK refusals", "OK hdrincl"} {
		if !slices.Contains(lines, want) {
			t.Errorf("parent with CAP_NET_RAW ambient did not report %q", want)
		}
	}
	if err != nil || strings.Contains(string(out), "FAIL") {
		t.Errorf("parent with CAP_NET_RAW ambient: %v\n%s", err, out)
	}
}
