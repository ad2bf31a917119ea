// Package lineinput is a one-line text input for the filter, command and
// prompt line: printable keys insert, backspace and ctrl+w/ctrl+u delete,
// left/right/home/end move. Pastes insert their text.
package lineinput

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// Model is the input's state.
type Model struct {
	Prompt string
	value  []rune
	pos    int
}

// SetValue replaces the text and puts the cursor at its end.
func (m *Model) SetValue(s string) {
	m.value = []rune(s)
	m.pos = len(m.value)
}

// Value is the text typed.
func (m Model) Value() string { return string(m.value) }

// Update edits the text on key presses and pastes.
func (m Model) Update(msg tea.Msg) Model {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		m.insert([]rune(strings.ReplaceAll(msg.Content, "\n", " ")))
	case tea.KeyPressMsg:
		switch msg.String() {
		case "backspace", "ctrl+h":
			if m.pos > 0 {
				m.value = append(m.value[:m.pos-1], m.value[m.pos:]...)
				m.pos--
			}
		case "delete", "ctrl+d":
			if m.pos < len(m.value) {
				m.value = append(m.value[:m.pos], m.value[m.pos+1:]...)
			}
		case "ctrl+u":
			m.value = append([]rune{}, m.value[m.pos:]...)
			m.pos = 0
		case "ctrl+w", "alt+backspace":
			start := m.pos
			for start > 0 && m.value[start-1] == ' ' {
				start--
			}
			for start > 0 && m.value[start-1] != ' ' {
				start--
			}
			m.value = append(m.value[:start], m.value[m.pos:]...)
			m.pos = start
		case "left", "ctrl+b":
			m.pos = max(m.pos-1, 0)
		case "right", "ctrl+f":
			m.pos = min(m.pos+1, len(m.value))
		case "home", "ctrl+a":
			m.pos = 0
		case "end", "ctrl+e":
			m.pos = len(m.value)
		default:
			if msg.Text != "" && !containsControl(msg.Text) {
				m.insert([]rune(msg.Text))
			}
		}
	}
	return m
}

func (m *Model) insert(rs []rune) {
	v := make([]rune, 0, len(m.value)+len(rs))
	v = append(v, m.value[:m.pos]...)
	v = append(v, rs...)
	m.value = append(v, m.value[m.pos:]...)
	m.pos += len(rs)
}

func containsControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// View draws the prompt, the text and a block cursor.
func (m Model) View() string {
	before, after := string(m.value[:m.pos]), ""
	cursor := "█"
	if m.pos < len(m.value) {
		cursor = "\x1b[7m" + string(m.value[m.pos]) + "\x1b[27m"
		after = string(m.value[m.pos+1:])
	}
	return m.Prompt + before + cursor + after
}
