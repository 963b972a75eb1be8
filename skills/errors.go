package skills

import (
	"errors"
	"fmt"
)

// ErrVerification is matched (with errors.Is) by every error that says
// content read from a server is not what the skill's entry describes: a
// [*SizeError], a [*DigestError], a [*FrontmatterError] or an
// [*UnlistedError]. The content is never handed over. The entry may be
// stale: [Client.Get] fetches the current one, which needs the user's
// approval again if its files differ.
var ErrVerification = errors.New("skills: verification failed")

// ErrDynamic is returned by [Client.Load] for a skill whose resources are
// "dynamic" (no digests to verify against), unless
// ClientOptions.AllowDynamic.
var ErrDynamic = errors.New(`skills: the skill's resources are "dynamic": its content cannot be verified`)

// ErrNotSupported is returned by the [Client] methods when the server did
// not declare the skills extension.
var ErrNotSupported = errors.New("skills: the server does not declare the skills extension")

// SizeError says a file read from the server is not as long as its
// entry says. It is checked before the digest.
type SizeError struct {
	URI       string
	Want, Got int64
}

// Error names the file and both lengths.
func (e *SizeError) Error() string {
	return fmt.Sprintf("skills: %s is %d bytes, but its entry says %d", e.URI, e.Got, e.Want)
}

// Is makes errors.Is(err, ErrVerification) true.
func (e *SizeError) Is(target error) bool { return target == ErrVerification }

// DigestError says a file read from the server does not hash to its
// entry's digest.
type DigestError struct {
	URI       string
	Want, Got string
}

// Error names the file and both digests.
func (e *DigestError) Error() string {
	return fmt.Sprintf("skills: %s hashes to %s, but its entry says %s", e.URI, e.Got, e.Want)
}

// Is makes errors.Is(err, ErrVerification) true.
func (e *DigestError) Is(target error) bool { return target == ErrVerification }

// FrontmatterError says the frontmatter of a SKILL.md read from the
// server is not the entry's: Field is the first member (in sorted order)
// that differs, or is empty when the file has no usable frontmatter
// (Reason says why).
type FrontmatterError struct {
	URI    string
	Field  string
	Reason string
}

// Error names the file and the field.
func (e *FrontmatterError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("skills: %s: %s", e.URI, e.Reason)
	}
	return fmt.Sprintf("skills: %s: the frontmatter's %q is not the entry's: %s", e.URI, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrVerification) true.
func (e *FrontmatterError) Is(target error) bool { return target == ErrVerification }

// UnlistedError says a file of a skill was asked for that the skill's
// entry does not list: while acting on a skill a host reads only the
// files of the entry it holds.
type UnlistedError struct {
	Skill, URI string
}

// Error names the file and the skill.
func (e *UnlistedError) Error() string {
	return fmt.Sprintf("skills: %s is not a file the entry of %s lists", e.URI, e.Skill)
}

// Is makes errors.Is(err, ErrVerification) true.
func (e *UnlistedError) Is(target error) bool { return target == ErrVerification }

// EntryError says a skill's entry is malformed, so that a host must not
// load it: no SKILL.md URI, no name or description, resources missing or
// of the wrong shape, a file outside the skill.
type EntryError struct {
	URI    string
	Reason string
}

// Error names the entry and the reason.
func (e *EntryError) Error() string {
	return fmt.Sprintf("skills: the entry of %s: %s", e.URI, e.Reason)
}

// LimitError says a skill is beyond a limit the client holds it to (by
// default the specification's: 512 files, 16 MiB). What is "files" or
// "bytes".
type LimitError struct {
	URI          string
	What         string
	Value, Limit int64
}

// Error names the skill, the count and the limit.
func (e *LimitError) Error() string {
	return fmt.Sprintf("skills: %s has %d %s, over the limit of %d", e.URI, e.Value, e.What, e.Limit)
}
