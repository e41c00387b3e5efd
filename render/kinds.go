package render

import (
	"fmt"

	"github.com/designbridge/caddy-designbridge/design"
)

// kind is everything the renderer knows of one block kind. Each kind lives
// in its own file, module_<kind>.go, which declares its kind value and its
// block type; kinds below lists them, and is the only list of known kinds.
type kind struct {
	name string // the module type without design.TypePrefix

	// content names the descriptor member that holds the block's content
	// ("" for one named after the kind, as most are).
	content string

	// decode reads the content member c (present or not, and an object
	// when present) into the kind's own block type: the one read of the
	// content, before anything is written. It fails on the first member
	// the renderers cannot read (a text member that is not text, …), with
	// a message starting at "descriptor.".
	decode func(c *design.Value) (block, error)

	// mobileCSS is the kind's rules for the document's @media block,
	// written once when some block of the kind asks for them
	// (emailWriter.useMobileCSS): what its blocks' classes mean on phones.
	mobileCSS string

	// textOmitted, when set, is the warning plain text gives for every
	// block of the kind: the block has text but plain text leaves it out.
	textOmitted string
}

// block is one module's content, decoded by its kind.
type block interface {
	// html writes the block of module m.
	html(w *emailWriter, m *design.Module)
	// text writes the block's plain text (nothing for a divider, …).
	text(w *textWriter)
}

// noText is embedded by blocks without plain text.
type noText struct{}

func (noText) text(*textWriter) {}

// styleOnly is the content of a block that reads only its style and has
// no text (a divider, a spacer).
type styleOnly struct {
	noText
	style design.Style
}

func styleOnlyOf(c *design.Value) styleOnly { return styleOnly{style: design.StyleOf(c.Get("style"))} }

// kinds maps a kind's name to its kind: the blocks the renderers draw.
// Every other kind is rendered as nothing, with a warning.
var kinds = registry(
	textKind,
	paragraphKind,
	headingKind,
	listKind,
	imageKind,
	buttonKind,
	dividerKind,
	spacerKind,
	socialKind,
	iconsKind,
	menuKind,
	htmlKind,
	videoKind,
	tableKind,
	formKind,
	emptyKind,
)

func registry(list ...kind) map[string]kind {
	m := make(map[string]kind, len(list))
	for _, k := range list {
		if k.content == "" {
			k.content = k.name
		}
		m[k.name] = k
	}
	return m
}

// contentKey names the descriptor member holding the content of a module
// of kind name, known or not: unknown kinds are checked too, so that a
// design the renderer cannot read is refused whatever it holds.
func contentKey(name string) string {
	if k, ok := kinds[name]; ok {
		return k.content
	}
	if name == design.KindMergeContent {
		return "mergeContent" // not rendered, but named otherwise
	}
	return name
}

// blocks is every module's block, decoded once per render: HTML and
// PlainText decode them all before they write anything, so that a
// wrongly typed design is refused with a path instead of rendering
// garbage.
type blocks struct {
	all      []block // in document order; nil for a kind not known
	rowStart []int   // index in all of each row's first module
}

// decodeBlocks decodes what the renderers read of every module; it fails
// on the first problem, as a *design.PathError naming the module. (A
// design that Decode refuses too never gets here: its problem is the one
// reported.)
func decodeBlocks(d *design.Design) (blocks, error) {
	n := 0
	for ri := range d.Page.Rows {
		for _, c := range d.Page.Rows[ri].Columns {
			n += len(c.Modules)
		}
	}
	bs := blocks{all: make([]block, 0, n), rowStart: make([]int, len(d.Page.Rows))}
	for ri := range d.Page.Rows {
		r := &d.Page.Rows[ri]
		bs.rowStart[ri] = len(bs.all)
		for ci := range r.Columns {
			mods := r.Columns[ci].Modules
			for mi := range mods {
				b, err := decodeModule(&mods[mi])
				if err != nil {
					// The path is built only for an error: most designs
					// have none.
					return blocks{}, &design.PathError{Path: modulePath(ri, ci, mi), Msg: err.Error()}
				}
				bs.all = append(bs.all, b)
			}
		}
	}
	return bs, nil
}

// column is the blocks of column ci of row ri (r), one per module.
func (bs *blocks) column(r *design.Row, ri, ci int) []block {
	i := bs.rowStart[ri]
	for j := range ci {
		i += len(r.Columns[j].Modules)
	}
	return bs.all[i : i+len(r.Columns[ci].Modules)]
}

func decodeModule(m *design.Module) (block, error) {
	name := m.EffectiveKind()
	key := contentKey(name)
	k, ok := kinds[name]
	if !ok {
		// Rendered as nothing, with a warning: whatever it holds, an
		// unknown block is never a failure (docs/contracts.md).
		return nil, nil
	}
	c := m.Descriptor.Get(key)
	if c.Present() && !c.IsObjectLike() {
		return nil, fmt.Errorf("descriptor.%s must be an object, not %s", key, c.Kind)
	}
	return k.decode(c)
}

// content reads the members of a block's content member, keeping the
// first one of the wrong type as err.
type content struct {
	c   *design.Value
	key string // the content member's name, for err
	err error
}

// text reads member name as text: a string or a number (editors write
// numbers for lengths), "" when absent; another type is an error.
func (r *content) text(name string) string {
	v := r.c.Get(name)
	if r.err == nil && !isTextOrAbsent(v) {
		r.err = fmt.Errorf("descriptor.%s.%s must be a string, not %s", r.key, name, v.Kind)
	}
	return v.Text()
}

// isTextOrAbsent tells whether a member the renderers read as text can be
// read so (numbers are tolerated: editors write them for lengths).
func isTextOrAbsent(v *design.Value) bool {
	return !v.Present() || v.Kind == design.String || v.Kind == design.Number
}
