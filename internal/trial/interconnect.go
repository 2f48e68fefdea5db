package trial

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/interconnect"
)

// Files of the interconnect part.
const (
	InterconnectDir = "interconnect"
	AllReduceFile   = "all_reduce_perf.txt"
	IBStatFile      = "ibstat.txt"
	NVBandwidthFile = "nvbandwidth.txt"
	IBWriteBWFile   = "ib_write_bw.txt"
)

// nvbandwidthTests are the testcases the trial runs: GPU-to-GPU copies
// one way (what nvlink_pair_gbps judges) by the copy engines, read and write.
var nvbandwidthTests = []string{"device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce"}

// ibWriteBWSeconds is how long each ib_write_bw loopback runs.
const ibWriteBWSeconds = 5

// runInterconnect runs, each when installed, nccl-tests' all_reduce_perf
// and nvbandwidth over the GPU part's cards (two or more), ibstat, and
// ib_write_bw in loopback on the first active InfiniBand port ibstat
// lists; saves their outputs, and checks the interconnect: block and the
// form factor the cards claim (an SXM part with PCIe-class all-reduce
// fails).
func runInterconnect(ctx context.Context, b *Bundle, o *Options) Part {
	p := Part{Name: PartInterconnect}
	var missing []string
	var m interconnect.Measured
	ct := interconnect.Contract{}
	if o.Contract.Interconnect != nil {
		ct = *o.Contract.Interconnect
	}
	// tool runs a program when it is installed (and gpu, when it needs two
	// cards or more), saves its output as file and parses it with parse.
	tool := func(prog, def, file string, needGPUs bool, args []string, parse func([]byte, string) error) error {
		if prog == "" {
			prog = def
		}
		if _, err := exec.LookPath(prog); err != nil {
			missing = append(missing, prog+" not found")
			return nil
		}
		if needGPUs && o.gpuCards < 2 {
			missing = append(missing, fmt.Sprintf("%s needs 2 or more GPUs, the GPU part found %d", def, o.gpuCards))
			return nil
		}
		out, err := output(ctx, prog, args...)
		rel := filepath.ToSlash(filepath.Join(InterconnectDir, file))
		if err == nil {
			err = b.WriteFile(rel, out)
		}
		if err == nil {
			p.Files = append(p.Files, rel)
			err = parse(out, rel)
		}
		return err
	}
	err := tool(o.AllReducePerf, "all_reduce_perf", AllReduceFile, true,
		// 1 MiB to 8 GiB: the largest sizes reach the links' bandwidth.
		[]string{"-b", "1M", "-e", "8G", "-f", "2", "-g", strconv.Itoa(o.gpuCards)},
		func(out []byte, rel string) (err error) {
			m.AllReduce, err = interconnect.ParseAllReduce(out, rel)
			return
		})
	if err == nil {
		err = tool(o.NVBandwidth, "nvbandwidth", NVBandwidthFile, true, append([]string{"-t"}, nvbandwidthTests...),
			func(out []byte, rel string) (err error) {
				m.NVBandwidth, err = interconnect.ParseNVBandwidth(out, rel)
				return
			})
	}
	if err == nil {
		err = tool(o.IBStat, "ibstat", IBStatFile, false, nil,
			func(out []byte, rel string) (err error) { m.IBPorts, err = interconnect.ParseIBStat(out, rel); return })
	}
	if err == nil {
		m.IBWriteBW, err = runIBWriteBW(ctx, b, o, m.IBPorts, &p, &missing)
	}
	if err != nil {
		p.Status, p.Reason = StatusError, err.Error()
		return p
	}
	if m.AllReduce != nil {
		r, _ := m.AllReduce.Largest()
		p.Lines = append(p.Lines, fmt.Sprintf("all-reduce bus bandwidth at %d bytes: %.2f GB/s", r.Bytes, *m.AllReduce.BusBWAtLargest()))
	}
	if m.NVBandwidth != nil {
		if pair, ok := m.NVBandwidth.SlowestPeerPair(); ok {
			p.Lines = append(p.Lines, fmt.Sprintf("nvbandwidth: slowest GPU pair %d → %d at %.2f GB/s (%s)", pair.Row, pair.Col, pair.GBps, pair.Test))
		}
	}
	if m.IBWriteBW != nil {
		r, _ := m.IBWriteBW.Largest()
		p.Lines = append(p.Lines, fmt.Sprintf("ib_write_bw loopback: %.2f Gb/s average at %d-byte messages", r.AvgGbps, r.Bytes))
	}

	var failed []string
	checks := interconnect.CheckAll(ct, m, o.gpuForm)
	for _, c := range checks {
		line := fmt.Sprintf("%s: required %v, measured %s", c.Name, c.Required, orDash(c.Measured))
		if c.Note != "" {
			line += " (" + c.Note + ")"
		}
		if !c.Pass {
			line += " FAIL"
			failed = append(failed, c.Name)
		}
		p.Lines = append(p.Lines, line)
	}
	switch {
	case len(failed) > 0:
		p.Status, p.Reason = StatusFail, "fails: "+strings.Join(failed, ", ")
		if len(missing) > 0 {
			p.Reason += " (" + strings.Join(missing, "; ") + ")"
		}
	case !m.Ran():
		p.Status, p.Reason = StatusNotChecked, strings.Join(missing, "; ")
	case len(checks) == 0:
		p.Status, p.Reason = StatusRan, "no interconnect: block in the contract: nothing checked"
	default:
		p.Status = StatusPass
		if len(missing) > 0 {
			p.Reason = strings.Join(missing, "; ")
		}
	}
	return p
}

// runIBWriteBW runs perftest's ib_write_bw in loopback on the first
// active InfiniBand port of ports: a server on it, and a client on the
// same port that reaches the server's exchange over 127.0.0.1. What it
// measures is the adapter and its PCIe slot (a slice sharing the lanes
// shows here), not the fabric: no second node is needed. The client's
// output is saved. nil, nil when it is not installed or no port is up.
func runIBWriteBW(ctx context.Context, b *Bundle, o *Options, ports []interconnect.IBPort, p *Part, missing *[]string) (*interconnect.IBWriteBW, error) {
	prog := o.IBWriteBW
	if prog == "" {
		prog = "ib_write_bw"
	}
	if _, err := exec.LookPath(prog); err != nil {
		*missing = append(*missing, prog+" not found")
		return nil, nil
	}
	var port *interconnect.IBPort
	for i := range ports {
		if ports[i].State == "Active" && ports[i].LinkLayer == "InfiniBand" {
			port = &ports[i]
			break
		}
	}
	if port == nil {
		*missing = append(*missing, "ib_write_bw needs an active InfiniBand port in ibstat's listing")
		return nil, nil
	}
	args := []string{"-d", port.CA, "-i", strconv.Itoa(port.Port), "-F", "--report_gbits", "-D", strconv.Itoa(ibWriteBWSeconds)}
	ctx, cancel := context.WithTimeout(ctx, (ibWriteBWSeconds+30)*time.Second)
	defer cancel()
	server := exec.CommandContext(ctx, prog, args...)
	if err := server.Start(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", prog, strings.Join(args, " "), err)
	}
	defer func() { _ = server.Wait() }()
	// The server listens for the exchange once it has opened the device;
	// perftest's client does not retry, so it is given a moment.
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out, err := output(ctx, prog, append(args, "127.0.0.1")...)
	if err != nil {
		_ = server.Process.Kill()
		return nil, err
	}
	rel := filepath.ToSlash(filepath.Join(InterconnectDir, IBWriteBWFile))
	if err := b.WriteFile(rel, out); err != nil {
		return nil, err
	}
	p.Files = append(p.Files, rel)
	return interconnect.ParseIBWriteBW(out, rel)
}

// ReadInterconnect reads a bundle's interconnect/ outputs, each nil in
// the result when the trial did not save it; a saved output that does
// not parse is an error naming the file. compare's recorded.trial reads
// the bundle with it.
func ReadInterconnect(dir string) (interconnect.Measured, error) {
	var m interconnect.Measured
	read := func(file string, parse func([]byte, string) error) error {
		p := filepath.Join(dir, InterconnectDir, file)
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return parse(b, p)
	}
	return m, errors.Join(
		read(AllReduceFile, func(b []byte, p string) (err error) { m.AllReduce, err = interconnect.ParseAllReduce(b, p); return }),
		read(IBStatFile, func(b []byte, p string) (err error) { m.IBPorts, err = interconnect.ParseIBStat(b, p); return }),
		read(NVBandwidthFile, func(b []byte, p string) (err error) { m.NVBandwidth, err = interconnect.ParseNVBandwidth(b, p); return }),
		read(IBWriteBWFile, func(b []byte, p string) (err error) { m.IBWriteBW, err = interconnect.ParseIBWriteBW(b, p); return }),
	)
}
