package httpiso

import (
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The Knitting example's TtlSecSchema: a missing ttlSec is 900 s; anything Number()
// cannot make finite is 900 s too; the rest is floored and clamped.
const (
	DefaultTTL = 900
	MinTTL     = 30
	MaxTTL     = 86_400
)

// JWTRequest is a /jwt body that passed the Knitting example's JwtPayloadSchema.
type JWTRequest struct {
	ID     string
	Email  string // "" when absent
	Role   string // "member" when absent
	TTLSec int64
}

// ParseJWT applies the Knitting example's JwtPayloadSchema to a body. It fails, and
// the route answers 400, when the body is not valid UTF-8, not a JSON
// object, or its user is not an object with a non-empty string id, an
// email (if present) that zod accepts, and a non-empty role (if present).
// Present-but-null optional fields fail too: zod's optional() accepts
// only undefined.
func ParseJWT(body []byte) (JWTRequest, bool) {
	obj, ok := decodeObject(body)
	if !ok {
		return JWTRequest{}, false
	}
	user, ok := obj["user"].(map[string]any)
	if !ok {
		return JWTRequest{}, false
	}
	req := JWTRequest{Role: "member", TTLSec: DefaultTTL}
	if req.ID, ok = user["id"].(string); !ok || req.ID == "" {
		return JWTRequest{}, false
	}
	if v, present := user["email"]; present {
		if req.Email, ok = v.(string); !ok || !zodEmail(req.Email) {
			return JWTRequest{}, false
		}
	}
	if v, present := user["role"]; present {
		if req.Role, ok = v.(string); !ok || req.Role == "" {
			return JWTRequest{}, false
		}
	}
	if v, present := obj["ttlSec"]; present {
		if n := jsNumber(v); finite(n) {
			req.TTLSec = int64(math.Max(MinTTL, math.Min(MaxTTL, math.Floor(n))))
		}
	}
	return req, true
}

// emailPattern is zod 3's email regex without its two lookaheads, which
// RE2 lacks; zodEmail checks those by hand. Letters are spelled out
// rather than matched with (?i), which in Go also folds the Kelvin sign
// and long s into [A-Z], where JavaScript's non-unicode /i does not.
var emailPattern = regexp.MustCompile(`^([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`)

// zodEmail is z.string().email() of zod 3.23:
// /^(?!\.)(?!.*\.\.)([A-Z0-9_'+\-\.]*)[A-Z0-9_+-]@([A-Z0-9][A-Z0-9\-]*\.)+[A-Z]{2,}$/i
func zodEmail(s string) bool {
	return !strings.HasPrefix(s, ".") && !strings.Contains(s, "..") && emailPattern.MatchString(s)
}

// jwtClaims is the Knitting example's payload in the Knitting example's key order (sub, email,
// role, iat, exp); email is left out when absent, as JSON.stringify
// leaves out undefined.
type jwtClaims struct {
	Sub   string `json:"sub"`
	Email string `json:"email,omitempty"`
	Role  string `json:"role"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
}

// jwt.Claims, for signing only: the validator never sees these claims.
func (c jwtClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.Exp, 0)), nil
}
func (c jwtClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.Iat, 0)), nil
}
func (c jwtClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }
func (c jwtClaims) GetIssuer() (string, error)              { return "", nil }
func (c jwtClaims) GetSubject() (string, error)             { return c.Sub, nil }
func (c jwtClaims) GetAudience() (jwt.ClaimStrings, error)  { return nil, nil }

// jwtReply is the Knitting example's 200 body, in its key order.
type jwtReply struct {
	OK    bool   `json:"ok"`
	Token string `json:"token"`
	Sub   string `json:"sub"`
	Exp   int64  `json:"exp"`
}

// IssueJWT is the /jwt route's work, the Knitting example's issueJwtHost: validate,
// sign HS256 with secret, answer {ok, token, sub, exp}; or 400 "Bad
// request" for a body ParseJWT refuses.
func IssueJWT(body []byte, secret []byte, now time.Time) Reply {
	req, ok := ParseJWT(body)
	if !ok {
		return badRequest
	}
	iat := now.Unix()
	exp := iat + req.TTLSec
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwtClaims{
		Sub: req.ID, Email: req.Email, Role: req.Role, Iat: iat, Exp: exp,
	}).SignedString(secret)
	if err != nil {
		// Only a key of the wrong type fails HS256 signing; secret is []byte.
		return Reply{Status: http.StatusInternalServerError, ContentType: contentText, Body: []byte("signing failed")}
	}
	b, err := jsonMarshal(jwtReply{OK: true, Token: token, Sub: req.ID, Exp: exp})
	if err != nil {
		panic("httpiso: encoding the JWT reply: " + err.Error())
	}
	return Reply{Status: http.StatusOK, ContentType: contentJSON, Body: b}
}
