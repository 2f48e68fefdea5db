package netlab

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TUNLinkEnv names an environment variable with the path of a prebuilt
// tunlink binary; when it is empty the lab builds one (once per process).
const TUNLinkEnv = "NETLAB_TUNLINK"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// tunlinkBinary builds ./tunlink without -race (the race detector would add
// its own delay to every packet) into a per-user cache directory. It writes
// a temporary file and renames it so that concurrent test processes never
// run a half-written binary.
func tunlinkBinary() (string, error) {
	if p := os.Getenv(TUNLinkEnv); p != "" {
		return p, nil
	}
	buildOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(build.Default.GOROOT, "bin", "go")
			if _, serr := os.Stat(goBin); serr != nil {
				buildErr = fmt.Errorf("building tunlink: no go command on PATH or in %s; set %s", build.Default.GOROOT, TUNLinkEnv)
				return
			}
		}
		dir := filepath.Join(os.TempDir(), "linecheck-netlab")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		removeStaleBuilds(dir)
		tmp, err := os.MkdirTemp(dir, "build")
		if err != nil {
			buildErr = err
			return
		}
		defer os.RemoveAll(tmp)
		out := filepath.Join(tmp, "tunlink")
		cmd := exec.Command(goBin, "build", "-o", out, "github.com/linecheck/linecheck/internal/testkit/netlab/tunlink")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		// Build inside the module even when the caller (labctl run by hand)
		// is elsewhere: this file's directory is in it.
		if _, file, _, ok := runtime.Caller(0); ok {
			if st, err := os.Stat(filepath.Dir(file)); err == nil && st.IsDir() {
				cmd.Dir = filepath.Dir(file)
			}
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building tunlink: %w\n%s", err, b)
			return
		}
		// A per-process name: the file is the process's argv[0], and a
		// leftover tunlink is recognised by its basename.
		final := filepath.Join(dir, strconv.Itoa(os.Getpid()), "tunlink")
		if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			buildErr = err
			return
		}
		if err := os.Rename(out, final); err != nil {
			buildErr = err
			return
		}
		buildPath = final
	})
	return buildPath, buildErr
}

// tunProc is a running tunlink program and the link it serves.
type tunProc struct {
	link   *link
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

// startTUN starts the TUN link program for lk and waits until it has
// created both devices.
func (l *Lab) startTUN(lk *link) error {
	bin, err := tunlinkBinary()
	if err != nil {
		return err
	}
	w := lk.wire
	args := []string{
		"-a-ns", "/run/netns/" + lk.left.name, "-a-dev", lk.ifL,
		"-b-ns", "/run/netns/" + lk.right.name, "-b-dev", lk.ifR,
		"-delay", w.Delay.String(), "-jitter", w.Jitter.String(),
		"-loss", strconv.FormatFloat(w.Loss, 'g', -1, 64),
		"-dup", strconv.FormatFloat(w.Dup, 'g', -1, 64),
		"-reorder", strconv.FormatFloat(w.Reorder, 'g', -1, 64),
		"-seed", strconv.FormatInt(w.Seed, 10),
		"-tag", l.cfg.Prefix}
	if ch := w.Change; ch != nil {
		args = append(args, "-change-at", ch.At.UTC().Format(time.RFC3339Nano),
			"-change-delay", ch.Delay.String(), "-change-jitter", ch.Jitter.String(),
			"-change-loss", strconv.FormatFloat(ch.Loss, 'g', -1, 64))
	}
	cmd := exec.Command(bin, args...)
	// If the test binary dies, so does the wire.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t := &tunProc{link: lk, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = t.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	l.tuns = append(l.tuns, t)
	if err := os.MkdirAll(filepath.Dir(pidFile(l.cfg.Prefix)), 0o755); err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	var pids strings.Builder
	for _, t := range l.tuns {
		fmt.Fprintf(&pids, "%d\n", t.cmd.Process.Pid)
	}
	if err := os.WriteFile(pidFile(l.cfg.Prefix), []byte(pids.String()), 0o644); err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() && strings.TrimSpace(sc.Text()) == "ready" {
			ready <- nil
		} else {
			ready <- errors.New("exited before it was ready")
		}
		for sc.Scan() {
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("TUN link %d: %w: %s", lk.idx, err, strings.TrimSpace(t.stderr.String()))
		}
	case <-time.After(10 * time.Second):
		return fmt.Errorf("TUN link %d: not ready after 10 s: %s", lk.idx, strings.TrimSpace(t.stderr.String()))
	}
	return nil
}

// removeStaleBuilds deletes the per-process build directories of processes
// that have exited.
func removeStaleBuilds(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); errors.Is(err, os.ErrNotExist) {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// TUNCounters are the packet counters of the TUN link: client→server
// packets read (In), written (Out, duplicates included), dropped (Lost),
// duplicated (Dup), sent undelayed (Reordered), dropped for a full queue
// (Overflow), and server→client packets copied (Back).
type TUNCounters struct {
	In, Out, Lost, Dup, Reordered, Overflow, Back int
	// Delays is how many delays the wire drew for client→server packets
	// (its -delay ± -jitter, before the FIFO rule), with their min, max,
	// mean and standard deviation; Late* how late, on average and at most,
	// those packets left (the machine's timer lateness). All in µs.
	Delays                                 int
	DelayMin, DelayMax, DelayMean, DelaySD int
	LateMean, LateMax                      int
}

var tunCountersRE = regexp.MustCompile(`tunlink: a->b in (\d+) out (\d+) lost (\d+) dup (\d+) reordered (\d+) overflow (\d+); b->a (\d+); ` +
	`delays (\d+) min (-?\d+) max (-?\d+) mean (-?\d+) sd (\d+) us; late mean (\d+) max (\d+) us`)

// TUNCounters asks the TUN link of Config.TUNLink for its counters
// (SIGUSR1) and returns them.
func (l *Lab) TUNCounters() (TUNCounters, error) {
	for _, t := range l.tuns {
		if t.link.idx == l.cfg.TUNLink && l.cfg.TUNLink != 0 {
			return l.tunCounters(t)
		}
	}
	return TUNCounters{}, fmt.Errorf("netlab %s: no TUN link", l.cfg.Prefix)
}

// WireCounters returns the counters of the wire into router into (a
// Config.Wires entry).
func (l *Lab) WireCounters(into string) (TUNCounters, error) {
	for _, t := range l.tuns {
		if t.link.wire != nil && t.link.wire.Into == into && into != "" {
			return l.tunCounters(t)
		}
	}
	return TUNCounters{}, fmt.Errorf("netlab %s: no wire into %q", l.cfg.Prefix, into)
}

func (l *Lab) tunCounters(t *tunProc) (TUNCounters, error) {
	var c TUNCounters
	if t.cmd.Process == nil {
		return c, fmt.Errorf("netlab %s: TUN link %d not running", l.cfg.Prefix, t.link.idx)
	}
	before := len(tunCountersRE.FindAllString(t.stderr.String(), -1))
	if err := t.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return c, fmt.Errorf("netlab %s: TUN link %d: %w", l.cfg.Prefix, t.link.idx, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		all := tunCountersRE.FindAllStringSubmatch(t.stderr.String(), -1)
		if len(all) > before {
			m := all[len(all)-1]
			v := make([]int, 14)
			for i := range v {
				v[i], _ = strconv.Atoi(m[i+1])
			}
			return TUNCounters{In: v[0], Out: v[1], Lost: v[2], Dup: v[3], Reordered: v[4], Overflow: v[5], Back: v[6],
				Delays: v[7], DelayMin: v[8], DelayMax: v[9], DelayMean: v[10], DelaySD: v[11], LateMean: v[12], LateMax: v[13]}, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c, fmt.Errorf("netlab %s: TUN link %d did not report its counters", l.cfg.Prefix, t.link.idx)
}
