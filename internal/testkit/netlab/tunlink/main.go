// Command tunlink is the userspace wire of the netlab test lab: it creates one
// TUN device in each of two network namespaces and copies packets between
// them, adding delay, jitter, loss, duplication and reordering to the a→b
// direction (the lab puts a in the client-side router, so a→b is
// client→server). The b→a direction is a plain wire.
//
// This kernel has no netem, so a TUN pair bridged by a process is the lab's
// only way to delay packets. Because it is a wire and not a router, TTLs and
// hop numbers are unchanged.
//
// The netlab package builds this program without -race (the race detector
// slows every packet) and starts it; it prints "ready" on stdout once both
// devices exist, prints its packet counters to stderr on SIGUSR1, and exits
// on SIGTERM or SIGINT (printing the counters) or when its parent dies.
//
// Ordering: by default packets leave in the order they arrived (a FIFO
// wire: a packet's due time is never earlier than the previous packet's),
// so jitter never reorders. -reorder P sends a fraction P of the packets
// without the delay, so they overtake the queued ones (netem's semantics).
//
// A scheduled change (-change-at, a wall-clock time in RFC 3339) switches
// the a→b delay, jitter and loss to -change-delay, -change-jitter and
// -change-loss for the packets read from then on: a line degrading at a
// known time (the evening peak of issue 30, in minutes).
//
// Usage:
//
//	tunlink -a-ns /run/netns/X -a-dev t3a -b-ns /run/netns/Y -b-dev t3b \
//	        [-delay 50ms] [-jitter 5ms] [-loss 0.02] [-dup 0.01] [-reorder 0.01] [-seed 1] [-tag lab] \
//	        [-change-at 2026-12-07T15:02:00Z -change-delay 80ms -change-jitter 0 -change-loss 0.3]
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// queueLen bounds the delayed direction's queue; a saturated wire drops
// instead of growing an unbounded delay (measured: an unbounded queue
// added 19 ms p99).
const queueLen = 8192

type counters struct {
	in, out, lost, dup, reordered, overflow atomic.Uint64
}

type impair struct {
	delay, jitter      time.Duration
	loss, dup, reorder float64
	// change, when not zero, is the wall-clock time (Unix ns) from which
	// the packets read take changed's delay, jitter and loss.
	change  int64
	changed struct {
		delay, jitter time.Duration
		loss          float64
	}
	mu      sync.Mutex
	rng     *rand.Rand
	lastDue int64 // CLOCK_MONOTONIC ns of the last queued packet
	cnt     counters
	// drawn are the delays drawn for the delayed packets (before the FIFO
	// rule): what the wire meant to add, however late its thread woke.
	drawn delayStats
	// late is how long after their due time the delayed packets left: the
	// machine's timer lateness, which an RTT measured through the wire adds.
	late  lateStats
	queue chan packet
	fdOut int
}

// delayStats sums the drawn delays (ns), under impair.mu.
type delayStats struct {
	n          int64
	min, max   int64
	sum, sumSq float64
}

func (d *delayStats) add(v int64) {
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	d.sum += float64(v)
	d.sumSq += float64(v) * float64(v)
}

// lateStats sums how late the delayed packets left (ns).
type lateStats struct {
	n, sum, max atomic.Int64
}

func (l *lateStats) add(v int64) {
	if v < 0 {
		v = 0
	}
	l.n.Add(1)
	l.sum.Add(v)
	for {
		m := l.max.Load()
		if v <= m || l.max.CompareAndSwap(m, v) {
			return
		}
	}
}

type packet struct {
	due  int64
	data []byte
}

func main() {
	aNS := flag.String("a-ns", "", "network namespace file of device a (e.g. /run/netns/labr3)")
	aDev := flag.String("a-dev", "", "name of the TUN device to create in a-ns")
	bNS := flag.String("b-ns", "", "network namespace file of device b")
	bDev := flag.String("b-dev", "", "name of the TUN device to create in b-ns")
	delay := flag.Duration("delay", 0, "one-way delay added a→b")
	jitter := flag.Duration("jitter", 0, "uniform jitter ±J added to the a→b delay")
	loss := flag.Float64("loss", 0, "fraction 0..1 of a→b packets dropped")
	dup := flag.Float64("dup", 0, "fraction 0..1 of a→b packets sent twice")
	reorder := flag.Float64("reorder", 0, "fraction 0..1 of a→b packets sent at once, overtaking delayed ones")
	seed := flag.Int64("seed", 1, "random seed for loss, jitter, dup and reorder")
	changeAt := flag.String("change-at", "", "wall-clock time (RFC 3339) from which -change-delay, -change-jitter and -change-loss apply a→b")
	changeDelay := flag.Duration("change-delay", 0, "one-way delay a→b from -change-at on")
	changeJitter := flag.Duration("change-jitter", 0, "jitter ±J a→b from -change-at on")
	changeLoss := flag.Float64("change-loss", 0, "fraction 0..1 of a→b packets dropped from -change-at on")
	_ = flag.String("tag", "", "lab prefix, so that a leftover process can be recognised")
	flag.Parse()
	if *aNS == "" || *aDev == "" || *bNS == "" || *bDev == "" {
		fmt.Fprintln(os.Stderr, "tunlink: -a-ns, -a-dev, -b-ns and -b-dev are required")
		os.Exit(2)
	}
	for name, p := range map[string]float64{"loss": *loss, "dup": *dup, "reorder": *reorder, "change-loss": *changeLoss} {
		if p < 0 || p > 1 {
			fmt.Fprintf(os.Stderr, "tunlink: -%s %v: want a fraction 0..1\n", name, p)
			os.Exit(2)
		}
	}
	if *jitter > *delay {
		fmt.Fprintf(os.Stderr, "tunlink: -jitter %v larger than -delay %v\n", *jitter, *delay)
		os.Exit(2)
	}
	var change int64
	if *changeAt != "" {
		t, err := time.Parse(time.RFC3339Nano, *changeAt)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tunlink: -change-at %q: want an RFC 3339 time such as 2026-12-07T15:02:00Z\n", *changeAt)
			os.Exit(2)
		}
		if *changeJitter > *changeDelay {
			fmt.Fprintf(os.Stderr, "tunlink: -change-jitter %v larger than -change-delay %v\n", *changeJitter, *changeDelay)
			os.Exit(2)
		}
		change = t.UnixNano()
	}
	// The lab starts us with Pdeathsig, but check once more in case the
	// parent died before that took effect.
	if os.Getppid() == 1 {
		os.Exit(1)
	}

	fdA, err := openTUN(*aNS, *aDev)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tunlink:", err)
		os.Exit(1)
	}
	fdB, err := openTUN(*bNS, *bDev)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tunlink:", err)
		os.Exit(1)
	}

	ab := &impair{
		delay: *delay, jitter: *jitter, loss: *loss, dup: *dup, reorder: *reorder,
		rng:    rand.New(rand.NewPCG(uint64(*seed), 0x6c696e65)),
		queue:  make(chan packet, queueLen),
		fdOut:  fdB,
		change: change,
	}
	ab.changed.delay, ab.changed.jitter, ab.changed.loss = *changeDelay, *changeJitter, *changeLoss
	// Three goroutines block in syscalls; spare Ps let each one continue at
	// once when its syscall returns instead of queueing for a P.
	runtime.GOMAXPROCS(8)
	var ba counters
	errc := make(chan error, 3)
	go func() { errc <- ab.read(fdA) }()
	go func() { errc <- ab.write() }()
	go func() { errc <- plain(fdB, fdA, &ba) }()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	usr := make(chan os.Signal, 1)
	signal.Notify(usr, syscall.SIGUSR1)
	fmt.Println("ready")
	c := &ab.cnt
	report := func() {
		fmt.Fprintf(os.Stderr, "tunlink: a->b in %d out %d lost %d dup %d reordered %d overflow %d; b->a %d; %s\n",
			c.in.Load(), c.out.Load(), c.lost.Load(), c.dup.Load(), c.reordered.Load(), c.overflow.Load(), ba.out.Load(), ab.timing())
	}
	for {
		select {
		case <-usr:
			report()
		case <-sig:
			report()
			os.Exit(0)
		case err := <-errc:
			fmt.Fprintln(os.Stderr, "tunlink:", err)
			report()
			os.Exit(1)
		}
	}
}

// openTUN creates TUN device dev inside the namespace at nsPath and returns a
// blocking fd bound to it. The fd keeps working from any thread afterwards.
func openTUN(nsPath, dev string) (int, error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("own namespace: %w", err)
	}
	defer unix.Close(orig)
	target, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("namespace %s: %w", nsPath, err)
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("setns %s: %w", nsPath, err)
	}
	fd, tunErr := createTUN(dev)
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		// This thread is in the wrong namespace: keep it locked so that it
		// dies with the goroutine instead of being reused.
		return -1, fmt.Errorf("setns back: %w", err)
	}
	runtime.UnlockOSThread()
	if tunErr != nil {
		return -1, fmt.Errorf("%s in %s: %w", dev, nsPath, tunErr)
	}
	return fd, nil
}

func createTUN(dev string) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var ifr [unix.IFNAMSIZ + 64]byte
	copy(ifr[:unix.IFNAMSIZ-1], dev)
	// IFF_TUN|IFF_NO_PI: raw IP packets, the kernel tells v4 from v6 by the
	// version nibble.
	*(*uint16)(unsafe.Pointer(&ifr[unix.IFNAMSIZ])) = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		unix.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF: %w", e)
	}
	return fd, nil
}

// realtime locks the goroutine to its thread and gives the thread SCHED_FIFO
// priority when allowed (root): on a loaded 2-core machine a normal thread
// woke up to tens of milliseconds late and the wire's delay grew with the
// load. The threads sleep in syscalls almost all the time, and the kernel's
// RT throttling keeps 5 % for everyone else in any case.
func realtime() {
	runtime.LockOSThread()
	_ = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 20}, 0)
}

func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// read draws the impairments for each a→b packet and queues it.
func (im *impair) read(fd int) error {
	realtime()
	buf := make([]byte, 65536)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("read a: %w", err)
		}
		now := monoNow()
		im.cnt.in.Add(1)
		delay, jitter, loss := im.delay, im.jitter, im.loss
		if im.change != 0 && time.Now().UnixNano() >= im.change {
			delay, jitter, loss = im.changed.delay, im.changed.jitter, im.changed.loss
		}
		im.mu.Lock()
		lost := loss > 0 && im.rng.Float64() < loss
		copies := 1
		if im.dup > 0 && im.rng.Float64() < im.dup {
			copies = 2
		}
		reorder := im.reorder > 0 && im.rng.Float64() < im.reorder
		d := int64(delay)
		if jitter > 0 {
			d += int64((im.rng.Float64()*2 - 1) * float64(jitter))
		}
		due := now + d
		if !reorder && due < im.lastDue {
			due = im.lastDue
		}
		if !reorder && !lost {
			im.lastDue = due
			im.drawn.add(d)
		}
		im.mu.Unlock()
		if lost {
			im.cnt.lost.Add(1)
			continue
		}
		if copies == 2 {
			im.cnt.dup.Add(1)
		}
		data := append([]byte(nil), buf[:n]...)
		if reorder {
			im.cnt.reordered.Add(1)
			for range copies {
				if _, err := unix.Write(im.fdOut, data); err == nil {
					im.cnt.out.Add(1)
				}
			}
			continue
		}
		for range copies {
			select {
			case im.queue <- packet{due: due, data: data}:
			default:
				im.cnt.overflow.Add(1)
			}
		}
	}
}

// write sends queued packets at their due time. It sleeps with an absolute
// clock_nanosleep on a locked thread with 1 ns timer slack: Go timers
// overshoot by up to a millisecond on a busy 2-core machine (measured).
func (im *impair) write() error {
	realtime()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	for p := range im.queue {
		if p.due > monoNow() {
			ts := unix.NsecToTimespec(p.due)
			for {
				err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
				if err != unix.EINTR {
					break
				}
			}
		}
		im.late.add(monoNow() - p.due)
		if _, err := unix.Write(im.fdOut, p.data); err != nil {
			// A full or vanished device: count and carry on, like a wire.
			im.cnt.overflow.Add(1)
			continue
		}
		im.cnt.out.Add(1)
	}
	return errors.New("queue closed")
}

// plain copies packets from in to out without impairment.
func plain(in, out int, c *counters) error {
	realtime()
	buf := make([]byte, 65536)
	for {
		n, err := unix.Read(in, buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("read b: %w", err)
		}
		if _, err := unix.Write(out, buf[:n]); err == nil {
			c.out.Add(1)
		}
	}
}

// timing says the drawn delays (n, min, max, mean, standard deviation) and
// the packets' lateness (mean, max), in µs.
func (im *impair) timing() string {
	im.mu.Lock()
	d := im.drawn
	im.mu.Unlock()
	mean, sd := 0.0, 0.0
	if d.n > 0 {
		mean = d.sum / float64(d.n)
		sd = math.Sqrt(max(0, d.sumSq/float64(d.n)-mean*mean))
	}
	lateMean := 0.0
	if n := im.late.n.Load(); n > 0 {
		lateMean = float64(im.late.sum.Load()) / float64(n)
	}
	return fmt.Sprintf("delays %d min %d max %d mean %.0f sd %.0f us; late mean %.0f max %d us",
		d.n, d.min/1000, d.max/1000, mean/1000, sd/1000, lateMean/1000, im.late.max.Load()/1000)
}
