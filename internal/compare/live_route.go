package compare

import (
	"context"
)

// liveRoutes fills the traces of a live measurement. TEMPORARY: recorded
// traces only, until probe.Trace lands.
func liveRoutes(ctx context.Context, c *Candidate, m *Measurement, opt Options) error {
	var err error
	if c.Recorded.Forward != "" {
		if m.Forward, err = readTrace(c.Recorded.Forward); err != nil {
			return err
		}
	}
	if c.Recorded.Return != "" {
		if m.Return, err = readTrace(c.Recorded.Return); err != nil {
			return err
		}
	}
	return nil
}
