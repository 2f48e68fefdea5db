package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// serveUserHelp is the part of serve --help about --user.
const serveUserHelp = `

Started as root, serve answers HTTP as --user (default nobody, from
/etc/passwd; its primary group, no other) and with no capability: raw
sockets come from a small helper that keeps CAP_NET_RAW alone, and serve
opens its listening socket, the candidates file, --targets, --asn-db, the
prefix table and the --web.config.file certificates before it switches.
A SIGHUP reload (and the throughput rounds) re-read the candidates file as
--user, so keep it readable by that user. --user '' stays root (still
without capabilities); started as another user, serve switches nothing.`

// runAs is the account serve switches to.
type runAs struct {
	name     string
	uid, gid int
}

// lookupRunAs finds name in passwd (/etc/passwd: no name service is asked,
// so no network); nil for "". A number is taken as a uid of the file too.
func lookupRunAs(name string, passwd io.Reader) (*runAs, error) {
	if name == "" {
		return nil, nil
	}
	sc := bufio.NewScanner(passwd)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 4 || strings.HasPrefix(f[0], "#") || (f[0] != name && f[2] != name) {
			continue
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
			return nil, fmt.Errorf("--user %s: /etc/passwd has no usable uid:gid for it (%q:%q)", name, f[2], f[3])
		}
		return &runAs{name: f[0], uid: uid, gid: gid}, nil
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--user %s: reading /etc/passwd: %w", name, err)
	}
	return nil, fmt.Errorf("--user %s: no such user in /etc/passwd: create one (useradd --system linecheck) or give --user '' to stay root", name)
}

// serveRunAs is --user looked up, nil when serve is to switch nothing: not
// the linecheck binary (a test running serve in its own process), not
// started as root, or --user ”.
func serveRunAs(name string) (*runAs, error) {
	if !separatePrivileges || name == "" {
		return nil, nil
	}
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return nil, fmt.Errorf("--user %s: %w", name, err)
	}
	defer f.Close()
	u, err := lookupRunAs(name, f)
	if err != nil {
		return nil, err
	}
	if r := os.Getuid(); r != 0 && r != u.uid {
		return nil, nil // started as another user: nothing to give up
	}
	return u, nil
}

// prepareRunAs is the first half of the switch, in the process started as
// root, before the privileges are separated (privileges.go): the real and
// saved ids become u's and the groups u's primary group alone, while the
// effective ids stay root's. The effective uid 0 keeps the capabilities the
// separation hands to the socket helper and drops from serve; and a process
// holding none may afterwards set all its ids to u (finishRunAs), since u
// is already its real id. Without this half, serve after the separation is
// uid 0 without CAP_SETUID and could never become u.
func prepareRunAs(u *runAs) error {
	if u == nil || os.Getuid() == u.uid {
		return nil // no switch, or already prepared (serve re-executed itself)
	}
	if err := syscall.Setgroups([]int{u.gid}); err != nil {
		return runAsErr(u, "setgroups", err)
	}
	if err := syscall.Setresgid(u.gid, -1, u.gid); err != nil {
		return runAsErr(u, "setresgid", err)
	}
	if err := syscall.Setresuid(u.uid, -1, u.uid); err != nil {
		return runAsErr(u, "setresuid", err)
	}
	return nil
}

// finishRunAs sets every id to u's, on every thread (Go applies set*id to
// all threads), once the sockets and files serve needs are open.
func finishRunAs(u *runAs) error {
	if u == nil || os.Geteuid() != 0 {
		return nil // started as u: nothing to give up
	}
	if err := syscall.Setresgid(u.gid, u.gid, u.gid); err != nil {
		return runAsErr(u, "setresgid", err)
	}
	if err := syscall.Setresuid(u.uid, u.uid, u.uid); err != nil {
		return runAsErr(u, "setresuid", err)
	}
	if os.Geteuid() != u.uid || os.Getegid() != u.gid {
		return fmt.Errorf("--user %s: still uid %d gid %d after switching", u.name, os.Geteuid(), os.Getegid())
	}
	return nil
}

func runAsErr(u *runAs, call string, err error) error {
	if errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("--user %s: %s: %w (root without CAP_SETUID/CAP_SETGID, as in some containers): give --user '' to run as is", u.name, call, err)
	}
	return fmt.Errorf("--user %s: %s: %w", u.name, call, err)
}
