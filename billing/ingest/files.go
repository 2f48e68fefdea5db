package ingest

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/linecheck/linecheck/billing"
)

// ReadFiles reads many traffic logs (the interface files of a PoP, one per
// port) with ReadFile, several at once, and returns their series in the
// order of paths, as reading them one by one would. At most GOMAXPROCS
// files are read at a time, so memory holds the series kept plus that many
// files in flight (each bounded by its period, as ReadFile is). The error
// is the one of the first failing path in that order; files after it are
// not started once it is known.
func ReadFiles(paths []string, opts ReadOptions) ([]*billing.Series, error) {
	if len(paths) == 1 {
		return ReadFile(paths[0], opts)
	}
	type result struct {
		series []*billing.Series
		err    error
	}
	res := make([]result, len(paths))
	var (
		next    atomic.Int64
		failed  atomic.Int64 // lowest failing index + 1; 0: none yet
		wg      sync.WaitGroup
		workers = min(runtime.GOMAXPROCS(0), len(paths))
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				if f := failed.Load(); f != 0 && int64(i) >= f {
					continue // a file before this one failed: its error is the answer
				}
				s, err := ReadFile(paths[i], opts)
				res[i] = result{s, err}
				if err != nil {
					for {
						f := failed.Load()
						if f != 0 && f <= int64(i)+1 || failed.CompareAndSwap(f, int64(i)+1) {
							break
						}
					}
				}
			}
		})
	}
	wg.Wait()
	var all []*billing.Series
	for _, r := range res {
		if r.err != nil {
			return nil, r.err
		}
		all = append(all, r.series...)
	}
	return all, nil
}
