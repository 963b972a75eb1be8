package server

import (
	"errors"
	"fmt"
)

// The bounds of the state annotations one round may carry: they ride in
// every requestState token, which the client echoes on every round.
const (
	// MaxStateAnnotations is how many annotations one request may seal.
	MaxStateAnnotations = 8
	// MaxStateAnnotationKey is the longest key, in bytes.
	MaxStateAnnotationKey = 64
	// MaxStateAnnotationValue is the longest value, in bytes.
	MaxStateAnnotationValue = 256
)

// ErrStateAnnotation is wrapped by the error of AnnotateState for an
// annotation over the bounds.
var ErrStateAnnotation = errors.New("server: state annotation over its bounds")

// StateAnnotation is one small named value sealed beside a round's
// requestState; see [Request.AnnotateState].
type StateAnnotation struct {
	Key, Value string
}

// AnnotatedStateProof is a StateProof that also carries the annotations
// sealed with the state (see [Request.AnnotateState]). A StateSealer that
// seals annotations returns one from Open.
type AnnotatedStateProof interface {
	StateProof
	// StateAnnotation returns the value sealed under key.
	StateAnnotation(key string) (string, bool)
}

// AnnotateState asks the server's StateSealer to seal value under key
// beside the requestState of this request's input_required result, so that
// the next round of the same call, on this instance or another that shares
// the keys, reads it back with StateAnnotation. It is for middleware that
// must tie the rounds of one call together (a tracing middleware keeps the
// first round's span there): the seal authenticates it, so a client can
// neither forge nor alter it, and it costs the client nothing to carry.
//
// Annotations are sealed only when the request ends in an input_required
// result with a requestState and the server has a StateSealer that seals
// them (requeststate's does); otherwise they are dropped. A later call
// with the same key replaces the value. A key or value over the bounds
// (MaxStateAnnotationKey, MaxStateAnnotationValue), or one annotation too
// many, is refused with an error wrapping ErrStateAnnotation.
func (r *Request) AnnotateState(key, value string) error {
	if key == "" || len(key) > MaxStateAnnotationKey || len(value) > MaxStateAnnotationValue {
		return fmt.Errorf("%w: key %q (%d bytes, at most %d) with a value of %d bytes (at most %d)", ErrStateAnnotation, key, len(key), MaxStateAnnotationKey, len(value), MaxStateAnnotationValue)
	}
	for i := range r.annotations {
		if r.annotations[i].Key == key {
			r.annotations[i].Value = value
			return nil
		}
	}
	if len(r.annotations) >= MaxStateAnnotations {
		return fmt.Errorf("%w: more than %d annotations", ErrStateAnnotation, MaxStateAnnotations)
	}
	r.annotations = append(r.annotations, StateAnnotation{key, value})
	return nil
}

// StateAnnotations returns the annotations to seal with this request's
// requestState, for a StateSealer's Seal. Do not modify them.
func (r *Request) StateAnnotations() []StateAnnotation { return r.annotations }

// StateAnnotation returns the value the round whose requestState this
// request echoes sealed under key (see AnnotateState); false when the
// request echoed no state, no StateSealer verified it, or the round sealed
// nothing under key.
func (r *Request) StateAnnotation(key string) (string, bool) {
	if p, ok := r.stateProof.(AnnotatedStateProof); ok {
		return p.StateAnnotation(key)
	}
	return "", false
}

// WrapBackChannel wraps the function that sends this request's
// server-to-client requests (Request.Ask, on a legacy session with a
// back-channel) in mw, so that middleware can see them, time them, or add
// to their params (a trace context in _meta). It does nothing when the
// request has no back-channel.
func (r *Request) WrapBackChannel(mw func(next CallFunc) CallFunc) {
	if r.call != nil && mw != nil {
		r.call = mw(r.call)
	}
}
