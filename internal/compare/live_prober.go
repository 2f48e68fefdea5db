package compare

import (
	"errors"
)

// compare's one-shot live run (Probe, Run without Offline) sends through
// Options.Prober, an engine.Prober: cmd gives it engine.Sender, tests a
// fake so no packet leaves.

// ErrNoProber is a live run asked without Options.Prober.
var ErrNoProber = errors.New("compare: a live run needs Options.Prober (engine.Sender sends)")
