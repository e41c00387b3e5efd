package render

import (
	"fmt"

	"github.com/designbridge/caddy-designbridge/design"
)

// kind is everything the renderer knows of one block kind. Each kind lives
// in its own file, module_<kind>.go, which declares its kind value; kinds
// below lists them, and is the only list of known kinds.
type kind struct {
	name string // the module type without design.TypePrefix

	// content names the descriptor member that holds the block's content
	// ("" for one named after the kind, as most are).
	content string

	// check reports the first member of the content that the renderers
	// cannot read (a text member that is not text, …); nil when there is
	// nothing to check. c is the content member, present or not, and an
	// object when present. The error message starts at "descriptor.".
	check func(c *design.Value) error

	// html writes the block; c is m's content member.
	html func(w *emailWriter, m *design.Module, c *design.Value)

	// text writes the block's plain text; nil for a block without text
	// (a divider, a spacer).
	text func(w *textWriter, c *design.Value)

	// mobileCSS is the kind's rules for the document's @media block,
	// written once when some block of the kind asks for them
	// (emailWriter.useMobileCSS): what its blocks' classes mean on phones.
	mobileCSS string

	// textOmitted, when set, is the warning plain text gives for every
	// block of the kind: the block has text but plain text leaves it out.
	textOmitted string
}

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

// check type-checks what the renderers read of every module, so that a
// wrongly typed design is refused with a path instead of rendering
// garbage: the first problem, as a *design.PathError naming the module.
// HTML and PlainText call it before they write anything. (A design that
// Decode refuses too never gets here: its problem is the one reported.)
func check(d *design.Design) error {
	for ri := range d.Page.Rows {
		r := &d.Page.Rows[ri]
		for ci := range r.Columns {
			mods := r.Columns[ci].Modules
			for mi := range mods {
				if err := checkModule(&mods[mi]); err != nil {
					// The path is built only for an error: most designs
					// have none.
					return &design.PathError{Path: modulePath(ri, ci, mi), Msg: err.Error()}
				}
			}
		}
	}
	return nil
}

func checkModule(m *design.Module) error {
	name := m.EffectiveKind()
	key := contentKey(name)
	c := m.Descriptor.Get(key)
	if c.Present() && !c.IsObjectLike() {
		return fmt.Errorf("descriptor.%s must be an object, not %s", key, c.Kind)
	}
	if k, ok := kinds[name]; ok && k.check != nil {
		return k.check(c)
	}
	return nil
}

// textMembers returns a check that the content members named are text
// when present: the check of most kinds. key is the content member's name.
func textMembers(key string, names ...string) func(c *design.Value) error {
	return func(c *design.Value) error {
		for _, n := range names {
			if v := c.Get(n); !isTextOrAbsent(v) {
				return fmt.Errorf("descriptor.%s.%s must be a string, not %s", key, n, v.Kind)
			}
		}
		return nil
	}
}

// isTextOrAbsent tells whether a member the renderers read as text can be
// read so (numbers are tolerated: editors write them for lengths).
func isTextOrAbsent(v *design.Value) bool {
	return !v.Present() || v.Kind == design.String || v.Kind == design.Number
}
