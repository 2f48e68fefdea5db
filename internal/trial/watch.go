package trial

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/gpu"
)

// QueryLogFile is the GPU samples taken while the baseline ran, in gpu/
// under the name compare's recorded.gpu reads as a query log (UTC).
const QueryLogFile = "query-log.csv"

// StarvedUtilPct is the mean GPU utilisation under which a card that was
// never throttled is reported starved: the GPUs waited on something else
// (input, network, a shared host), not on their own limits.
const StarvedUtilPct = 60

// gpuWatch samples every card with nvidia-smi while the baseline runs.
type gpuWatch struct {
	cmd  *exec.Cmd
	file *os.File
	path string
}

// startWatch starts `nvidia-smi --query-gpu=… --format=csv -l 1` into
// gpu/query-log.csv, with TZ=UTC so its timestamps are UTC as compare
// reads them; nil when there are no cards to watch.
func startWatch(b *Bundle, o *Options) (*gpuWatch, error) {
	if o.gpuCards == 0 {
		return nil, nil
	}
	prog := o.NVIDIASMI
	if prog == "" {
		prog = "nvidia-smi"
	}
	path := filepath.Join(b.Dir, GPUDir, QueryLogFile)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, "--query-gpu="+gpu.WatchQuery, "--format=csv", "-l", "1")
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.Stdout = f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	return &gpuWatch{cmd: cmd, file: f, path: path}, nil
}

// stop ends the sampling and reads what it wrote.
func (w *gpuWatch) stop() ([]gpu.Sample, error) {
	_ = w.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		<-done
	}
	w.file.Close()
	b, err := os.ReadFile(w.path)
	if err != nil {
		return nil, err
	}
	return gpu.ParseSamples(b, w.path, time.UTC)
}

// judgeWatch turns the samples taken during the baseline into lines: per
// card the throttled share and its reasons, and a card never throttled
// whose mean utilisation is under StarvedUtilPct reported starved; the
// gpu: block's watch keys (max_temp_c, max_throttle_share) checked.
// starved lists the starved cards.
func judgeWatch(samples []gpu.Sample, ct *gpu.Contract) (lines []string, starved []string, failed []string) {
	cards := gpu.Summarize(samples)
	for _, c := range cards {
		share, util := "-", "-"
		if c.ThrottleShare != nil {
			share = fmt.Sprintf("%.0f %%", *c.ThrottleShare*100)
		}
		if c.MeanUtilGPU != nil {
			util = fmt.Sprintf("%.0f %%", *c.MeanUtilGPU)
		}
		line := fmt.Sprintf("GPU %d: %d samples, throttled %s of them, mean utilisation %s", c.Index, c.Samples, share, util)
		var reasons []string
		for r, v := range c.ByReason {
			if v > 0 {
				reasons = append(reasons, fmt.Sprintf("%s %.0f %%", r, v*100))
			}
		}
		sort.Strings(reasons)
		if len(reasons) > 0 {
			line += " (" + strings.Join(reasons, ", ") + ")"
		}
		if c.MeanUtilGPU != nil && *c.MeanUtilGPU < StarvedUtilPct && c.ThrottleShare != nil && *c.ThrottleShare == 0 {
			line += fmt.Sprintf("; starved: under %d %% busy without throttling, the GPU waited on input, the network or a shared host", StarvedUtilPct)
			starved = append(starved, fmt.Sprint(c.Index))
		}
		lines = append(lines, line)
	}
	if ct != nil && (ct.MaxTempC != nil || ct.MaxThrottleShare != nil) {
		for _, ch := range gpu.CheckWatch(*ct, cards) {
			l := fmt.Sprintf("%s: required %v, measured %s", ch.Name, ch.Required, orDash(ch.Measured))
			if !ch.Pass {
				l += " FAIL"
				failed = append(failed, ch.Name)
			}
			lines = append(lines, l)
		}
	}
	return lines, starved, failed
}
