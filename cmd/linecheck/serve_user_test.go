package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLookupRunAs(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/bash\n# a comment\nbroken:x:abc:1::/:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nprom:x:990:985::/:/bin/false\n"
	for _, tc := range []struct {
		name          string
		uid, gid      int
		want, wantErr string
	}{
		{"nobody", 65534, 65534, "nobody", ""},
		{"prom", 990, 985, "prom", ""},
		{"990", 990, 985, "prom", ""},
		{"nosuch", 0, 0, "", "no such user in /etc/passwd"},
		{"broken", 0, 0, "", "no usable uid:gid"},
	} {
		u, err := lookupRunAs(tc.name, strings.NewReader(passwd))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--user "+tc.name) {
				t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case u.name != tc.want || u.uid != tc.uid || u.gid != tc.gid:
			t.Errorf("%s: %+v, want %s %d:%d", tc.name, *u, tc.want, tc.uid, tc.gid)
		}
	}
	if u, err := lookupRunAs("", strings.NewReader(passwd)); u != nil || err != nil {
		t.Errorf("--user '': %v %v, want no switch", u, err)
	}
}

// procStatus reads the fields of /proc/PID/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}

// startServeBinary starts the linecheck binary bin as `serve args…` (main
// separates the privileges, which a test's in-process run never does), and
// returns it and where it listens.
func startServeBinary(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncBuffer, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var listen string
	waitFor(t, 30*time.Second, "serve to say where it listens", func() bool {
		m := serveListening.FindStringSubmatch(log.String())
		if m != nil {
			listen = m[1]
		}
		return m != nil || cmd.ProcessState != nil
	})
	return cmd, log, listen
}

// Issue 37: serve started as root kept uid 0 (no capability, but root's
// files and processes). Now its HTTP process is --user, with no capability,
// and probes still run (their raw sockets come from the helper). The
// candidates file is root's, mode 0600: read before the switch.
func TestServeAsRootAnswersAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: serve switches user only when started as root")
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd")
	}
	nobody, err := serveRunAsLookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	bin := buildBin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "candidates.yaml")
	if err := os.WriteFile(cfg, []byte("candidates:\n  - name: lo\n    targets: [{addr: 127.0.0.1}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("unknown --user", func(t *testing.T) {
		out, err := exec.Command(bin, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--user", "no-such-user-lc").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "--user no-such-user-lc: no such user in /etc/passwd") {
			t.Errorf("exit %v, output %q; want 2 and the user named", err, out)
		}
	})
	for _, tc := range []struct {
		name     string
		args     []string
		uid, gid int
	}{
		{"default --user", nil, nobody.uid, nobody.gid},
		{"--user ''", []string{"--user", ""}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--config", cfg, "--count", "2", "--interval", "100ms", "--trace-every", "0"}, tc.args...)
			cmd, log, listen := startServeBinary(t, bin, args...)
			if listen == "" {
				t.Fatalf("serve did not start:\n%s", log.String())
			}
			// Probes answered: the helper's raw sockets work for --user.
			scrapeUntil(t, listen, "an answered probe", func(m string) bool {
				return regexp.MustCompile(`(?m)^linecheck_probes_received_total\{[^}]*target="127\.0\.0\.1"[^}]*\} [1-9]`).MatchString(m)
			})
			st := procStatus(t, cmd.Process.Pid) // exec keeps the pid: this is serve's HTTP process
			uid, gid := strconv.Itoa(tc.uid), strconv.Itoa(tc.gid)
			if want := strings.Repeat(uid+" ", 3) + uid; st["Uid"] != want {
				t.Errorf("Uid %q, want %q (real, effective, saved, fs)\n%s", st["Uid"], want, log.String())
			}
			if want := strings.Repeat(gid+" ", 3) + gid; st["Gid"] != want {
				t.Errorf("Gid %q, want %q", st["Gid"], want)
			}
			for _, k := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb"} {
				if st[k] != "0000000000000000" {
					t.Errorf("%s %s, want none", k, st[k])
				}
			}
			if kids, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/task/" + strconv.Itoa(cmd.Process.Pid) + "/children"); err == nil {
				for _, k := range strings.Fields(string(kids)) {
					if pid, err := strconv.Atoi(k); err == nil {
						h := procStatus(t, pid)
						t.Logf("child %d %s: Uid %s CapEff %s", pid, h["Name"], h["Uid"], h["CapEff"])
					}
				}
			}
			if tc.uid != 0 {
				if st["Groups"] != gid {
					t.Errorf("Groups %q, want %q alone", st["Groups"], gid)
				}
				if !strings.Contains(log.String(), "running as user nobody (uid "+uid) {
					t.Errorf("serve does not say whom it runs as:\n%s", log.String())
				}
			}
		})
	}
}

// serveRunAsLookup looks name up in this machine's /etc/passwd.
func serveRunAsLookup(name string) (*runAs, error) {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return lookupRunAs(name, f)
}
