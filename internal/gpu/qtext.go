package gpu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ParseQText reads `nvidia-smi -q` (also `nvidia-smi -a`): the tree of
// "Key : Value" lines, nested by indentation, one "GPU 00000000:18:00.0"
// section per card.
func ParseQText(b []byte, name string) (*Machine, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	m := &Machine{}
	src := "text:" + name
	type frame struct {
		indent int
		key    string
	}
	var stack []frame
	var cur *Card
	var curLine int
	header := false
	attached, attachedLine := 0, 0
	ln := 0
	var errs []error
	finish := func() {
		if cur != nil {
			m.Cards = append(m.Cards, *cur)
			cur = nil
		}
	}
	for sc.Scan() {
		ln++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if strings.Contains(raw, "NVSMI LOG") {
			header = true
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		line := strings.TrimSpace(raw)
		if indent == 0 && strings.HasPrefix(line, "GPU ") && !strings.Contains(line, " : ") {
			finish()
			cur = &Card{Index: len(m.Cards), BusID: normBusID(strings.TrimSpace(strings.TrimPrefix(line, "GPU "))), Sources: []string{src}}
			curLine = ln
			stack = stack[:0]
			continue
		}
		key, val, hasVal := strings.Cut(line, " : ")
		if !hasVal && strings.HasSuffix(line, ":") {
			key, hasVal = strings.TrimSuffix(line, ":"), true
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if !hasVal || val == "" && !strings.Contains(line, ":") {
			stack = append(stack, frame{indent, key})
			continue
		}
		var path []string
		for _, f := range stack {
			path = append(path, f.key)
		}
		path = append(path, key)
		p := strings.Join(path, "/")
		if cur == nil {
			switch p {
			case "Driver Version":
				m.Driver = val
			case "CUDA Version":
				m.CUDA = val
			case "Attached GPUs":
				fmt.Sscanf(val, "%d", &attached)
				attachedLine = ln
			}
			continue
		}
		if err := qField(cur, p, val); err != nil {
			errs = append(errs, perr(name, ln, "%s: %v", p, err))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, perr(name, ln, "%v", err)
	}
	finish()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !header && len(m.Cards) == 0 {
		return nil, perr(name, 0, "not the output of nvidia-smi -q (no \"==============NVSMI LOG==============\" line and no \"GPU 00000000:…\" section)")
	}
	if len(m.Cards) == 0 {
		return nil, perr(name, ln, "no \"GPU 00000000:…\" section: the output is cut short or the machine shows no GPU")
	}
	for i := range m.Cards {
		if m.Cards[i].Name == "" {
			return nil, perr(name, curLine, "GPU %s has no Product Name line: the output is cut short", m.Cards[i].BusID)
		}
	}
	if attached > len(m.Cards) {
		return nil, perr(name, ln, "%d GPU sections, but line %d says Attached GPUs: %d: the output is cut short", len(m.Cards), attachedLine, attached)
	}
	return m, nil
}

// qField sets the card field the -q path names.
func qField(c *Card, p, val string) error {
	switch p {
	case "Product Name":
		c.Name = val
	case "Serial Number":
		c.Serial = clean(val)
	case "GPU UUID":
		c.UUID = clean(val)
	case "MIG Mode/Current":
		c.MIG = mode(val)
	case "MIG Devices":
		// "MIG Devices : None" when MIG is off.
	case "PCI/Device Id":
		c.DeviceID = clean(val)
	case "PCI/Bus Id":
		c.BusID = normBusID(val)
	case "PCI/GPU Link Info/PCIe Generation/Max":
		return setInt(&c.PCIeGenMax, val)
	case "PCI/GPU Link Info/PCIe Generation/Current":
		return setInt(&c.PCIeGenCurrent, val)
	case "PCI/GPU Link Info/Link Width/Max":
		return setInt(&c.PCIeWidthMax, val)
	case "PCI/GPU Link Info/Link Width/Current":
		return setInt(&c.PCIeWidthCurrent, val)
	case "FB Memory Usage/Total":
		return setNum(&c.MemoryMiB, val)
	case "ECC Mode/Current":
		c.ECC = mode(val)
	// Drivers from 535 on: "GPU Power Readings/Current Power Limit";
	// before: "Power Readings/Power Limit" beside "Enforced Power Limit".
	case "GPU Power Readings/Current Power Limit", "Power Readings/Enforced Power Limit":
		return setNum(&c.PowerLimitW, val)
	case "Power Readings/Power Limit":
		if c.PowerLimitW == nil {
			return setNum(&c.PowerLimitW, val)
		}
	case "GPU Power Readings/Default Power Limit", "Power Readings/Default Power Limit":
		return setNum(&c.DefaultPowerLimitW, val)
	case "GPU Power Readings/Max Power Limit", "Power Readings/Max Power Limit":
		return setNum(&c.MaxPowerLimitW, val)
	default:
		if strings.HasPrefix(p, "MIG Devices/MIG Device") && strings.HasSuffix(p, "Index") && !strings.Contains(p, "Instance") {
			n := 1
			if c.MIGDevices != nil {
				n = *c.MIGDevices + 1
			}
			c.MIGDevices = iptr(n)
		}
	}
	return nil
}
