package plot

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// ---- SVG ---------------------------------------------------------------------

func esc(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")
	return r.Replace(s)
}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func svg(c *canvas) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", c.w, c.h, c.w, c.h)
	if c.title != "" {
		fmt.Fprintf(&b, "<title>%s</title>\n", esc(c.title))
	}
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", c.w, c.h)
	for _, p := range c.prims {
		switch p.kind {
		case 'l':
			if len(p.pts) == 0 {
				continue
			}
			var pts strings.Builder
			for i, q := range p.pts {
				if i > 0 {
					pts.WriteByte(' ')
				}
				pts.WriteString(f1(q.x) + "," + f1(q.y))
			}
			if p.fill {
				first, last := p.pts[0], p.pts[len(p.pts)-1]
				fmt.Fprintf(&b, `<polygon points="%s %s,%s %s,%s" fill="%s" fill-opacity="0.55" stroke="%s" stroke-width="1"/>`+"\n",
					pts.String(), f1(last.x), f1(p.base), f1(first.x), f1(p.base), p.color, p.color)
				continue
			}
			dash := ""
			if p.dash {
				dash = ` stroke-dasharray="6,4"`
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"%s/>`+"\n", pts.String(), p.color, f1(p.width), dash)
		case 'r':
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s">`, f1(p.x), f1(p.y), f1(p.w), f1(p.h), p.color)
			if p.title != "" {
				fmt.Fprintf(&b, "<title>%s</title>", esc(p.title))
			}
			b.WriteString("</rect>\n")
		case 't':
			anchor := map[byte]string{'l': "start", 'm': "middle", 'r': "end"}[p.anchor]
			extra := ""
			if p.bold {
				extra += ` font-weight="bold"`
			}
			if p.vert {
				extra += fmt.Sprintf(` transform="rotate(-90 %s %s)"`, f1(p.x), f1(p.y))
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="%s" fill="%s" text-anchor="%s"%s>%s</text>`+"\n", f1(p.x), f1(p.y), f1(p.size), p.color, anchor, extra, esc(p.text))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// ---- PNG ---------------------------------------------------------------------

func parseColor(s string) color.RGBA {
	s = strings.TrimPrefix(s, "#")
	if len(s) != 6 {
		return color.RGBA{0, 0, 0, 255}
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return color.RGBA{0, 0, 0, 255}
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
}

type raster struct{ img *image.RGBA }

func (r raster) blend(x, y int, c color.RGBA, a float64) {
	if !(image.Point{x, y}.In(r.img.Rect)) || a <= 0 {
		return
	}
	a = min(a, 1)
	o := r.img.RGBAAt(x, y)
	mix := func(dst, src uint8) uint8 { return uint8(float64(dst)*(1-a) + float64(src)*a + 0.5) }
	r.img.SetRGBA(x, y, color.RGBA{mix(o.R, c.R), mix(o.G, c.G), mix(o.B, c.B), 255})
}

// segment draws a line of the given width by stamping a disc along it;
// with dash, 6 px on and 4 px off.
func (r raster) segment(a, b pt, c color.RGBA, width float64, dash bool, phase *float64) {
	dx, dy := b.x-a.x, b.y-a.y
	l := math.Hypot(dx, dy)
	n := int(math.Ceil(l)) + 1
	rad := math.Max(width/2, 0.5)
	for i := 0; i < n; i++ {
		t := 0.0
		if n > 1 {
			t = float64(i) / float64(n-1)
		}
		if dash && math.Mod(*phase+t*l, 10) >= 6 {
			continue
		}
		cx, cy := a.x+dx*t, a.y+dy*t
		for y := int(cy - rad - 1); y <= int(cy+rad+1); y++ {
			for x := int(cx - rad - 1); x <= int(cx+rad+1); x++ {
				d := math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy)
				if d <= rad+0.5 {
					cov := math.Min(1, rad+0.5-d)
					if o := r.img.RGBAAt(x, y); o == c {
						continue
					}
					r.blend(x, y, c, cov)
				}
			}
		}
	}
	*phase += l
}

// ascii replaces the punctuation basicfont (ASCII only) cannot draw.
var ascii = strings.NewReplacer("—", "-", "–", "-", "×", "x", "…", "...", "≈", "~", "°", "deg", "µ", "u", "Δ", "d", "·", ".", "→", "->", "≥", ">=", "≤", "<=")

func pngOf(c *canvas) ([]byte, error) {
	if c.w <= 0 || c.h <= 0 || c.w > 10000 || c.h > 10000 {
		return nil, fmt.Errorf("plot: image size %d×%d out of range", c.w, c.h)
	}
	r := raster{image.NewRGBA(image.Rect(0, 0, c.w, c.h))}
	draw.Draw(r.img, r.img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	face := basicfont.Face7x13
	for _, p := range c.prims {
		col := parseColor(p.color)
		switch p.kind {
		case 'l':
			if p.fill {
				fillUnder(r, p.pts, p.base, col)
			}
			phase := 0.0
			for i := 1; i < len(p.pts); i++ {
				r.segment(p.pts[i-1], p.pts[i], col, p.width, p.dash, &phase)
			}
		case 'r':
			rect := image.Rect(int(math.Round(p.x)), int(math.Round(p.y)), int(math.Round(p.x+p.w)), int(math.Round(p.y+p.h)))
			draw.Draw(r.img, rect, image.NewUniform(col), image.Point{}, draw.Src)
		case 't':
			if p.vert {
				drawVertical(r.img, face, p, col)
				continue
			}
			p.text = ascii.Replace(p.text)
			d := &font.Drawer{Dst: r.img, Src: image.NewUniform(col), Face: face}
			w := d.MeasureString(p.text).Round()
			x := int(p.x)
			switch p.anchor {
			case 'm':
				x -= w / 2
			case 'r':
				x -= w
			}
			d.Dot = fixed.P(x, int(p.y))
			d.DrawString(p.text)
			if p.bold {
				d.Dot = fixed.P(x+1, int(p.y))
				d.DrawString(p.text)
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, r.img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fillUnder shades the area between a polyline and the baseline, column by column.
func fillUnder(r raster, pts []pt, base float64, c color.RGBA) {
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if b.x < a.x {
			a, b = b, a
		}
		for x := int(math.Ceil(a.x)); float64(x) <= b.x; x++ {
			y := a.y
			if b.x > a.x {
				y = a.y + (b.y-a.y)*(float64(x)-a.x)/(b.x-a.x)
			}
			for yy := int(y); yy < int(base); yy++ {
				r.blend(x, yy, c, 0.45)
			}
		}
	}
}

// drawVertical draws text rotated by −90° (an axis label) via a scratch image.
func drawVertical(dst *image.RGBA, face font.Face, p prim, col color.RGBA) {
	d := &font.Drawer{Face: face}
	w := d.MeasureString(p.text).Round()
	tmp := image.NewRGBA(image.Rect(0, 0, w, 13))
	d.Dst, d.Src, d.Dot = tmp, image.NewUniform(col), fixed.P(0, 10)
	d.DrawString(p.text)
	x0, y0 := int(p.x)-6, int(p.y)+w/2
	for y := 0; y < 13; y++ {
		for x := 0; x < w; x++ {
			if px := tmp.RGBAAt(x, y); px.A > 0 {
				dst.SetRGBA(x0+y, y0-x, col)
			}
		}
	}
}
