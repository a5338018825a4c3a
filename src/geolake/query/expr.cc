#include "geolake/query/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace geolake::query {
namespace {

// ---- Lexer -----------------------------------------------------------------------------------

enum class Tok : std::uint8_t {
  kEnd,
  kIdent,
  kQuotedIdent,
  kString,
  kInt,
  kFloat,
  kOp,
  kLParen,
  kRParen,
  kComma
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  std::size_t position = 0;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

Status LexError(std::size_t pos, const std::string& what) {
  return Status::InvalidArgument(fmt::format("--where: at offset {}: {}", pos, what));
}

Result<std::vector<Token>> Lex(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.position = i;
    if (IsIdentStart(c)) {
      std::size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      t.kind = Tok::kIdent;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (c == '"' || c == '\'') {
      // "identifier" or 'string'; a doubled quote stands for itself.
      std::size_t j = i + 1;
      std::string text;
      bool closed = false;
      while (j < s.size()) {
        if (s[j] == c) {
          if (j + 1 < s.size() && s[j + 1] == c) {
            text += c;
            j += 2;
            continue;
          }
          closed = true;
          ++j;
          break;
        }
        text += s[j++];
      }
      if (!closed)
        return LexError(i, c == '"' ? "unterminated quoted name" : "unterminated string");
      t.kind = c == '"' ? Tok::kQuotedIdent : Tok::kString;
      t.text = std::move(text);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i;
      bool is_float = false;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      if (j < s.size() && s[j] == '.') {
        is_float = true;
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          is_float = true;
          j = k;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        }
      }
      if (j < s.size() && IsIdentStart(s[j])) return LexError(j, "malformed number");
      t.kind = is_float ? Tok::kFloat : Tok::kInt;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (c == '(' || c == ')' || c == ',') {
      t.kind = c == '(' ? Tok::kLParen : c == ')' ? Tok::kRParen : Tok::kComma;
      t.text = std::string(1, c);
      ++i;
    } else if (c == '=' || c == '<' || c == '>' || c == '!' || c == '-') {
      std::string op(1, c);
      if (i + 1 < s.size()) {
        const char d = s[i + 1];
        if ((c == '<' && (d == '=' || d == '>')) || (c == '>' && d == '=') ||
            (c == '!' && d == '=')) {
          op += d;
        }
      }
      if (op == "!") return LexError(i, "'!' must be followed by '='");
      t.kind = Tok::kOp;
      t.text = op;
      i += op.size();
    } else {
      return LexError(i, fmt::format("unexpected character '{}'", c));
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.position = s.size();
  out.push_back(end);
  return out;
}

bool KeywordIs(const Token& t, std::string_view word) {
  if (t.kind != Tok::kIdent || t.text.size() != word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(t.text[i])) != word[i]) return false;
  }
  return true;
}

bool IsReserved(const Token& t) {
  for (std::string_view w : {"AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "TRUE", "FALSE"}) {
    if (KeywordIs(t, w)) return true;
  }
  return false;
}

// ---- Parser ----------------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Result<std::unique_ptr<Expr>> ParseAll() {
    GEOLAKE_ASSIGN_OR_RETURN(auto e, ParseOr());
    if (Peek().kind != Tok::kEnd) return Error(Peek(), "expected AND, OR or the end");
    return e;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  static Status Error(const Token& t, const std::string& what) {
    const std::string found = t.kind == Tok::kEnd ? "the end" : "'" + t.text + "'";
    return LexError(t.position, what + ", found " + found);
  }

  // Every Parse* function leaves the height of the tree it returns in height_; the chains of
  // ParseOr/ParseAnd and the recursion of ParseNot are bounded (kMaxExpression*), so neither
  // the parser nor the recursive binding, evaluation and destruction of the tree can exhaust
  // the stack.
  Result<std::unique_ptr<Expr>> ParseOr() { return ParseChain("OR", Expr::Op::kOr); }
  Result<std::unique_ptr<Expr>> ParseAnd() { return ParseChain("AND", Expr::Op::kAnd); }

  Result<std::unique_ptr<Expr>> ParseChain(std::string_view keyword, Expr::Op op) {
    const auto operand = [&]() { return op == Expr::Op::kOr ? ParseAnd() : ParseNot(); };
    GEOLAKE_ASSIGN_OR_RETURN(auto left, operand());
    int left_height = height_;
    while (KeywordIs(Peek(), keyword)) {
      auto node = std::make_unique<Expr>();
      node->op = op;
      node->position = Next().position;
      GEOLAKE_ASSIGN_OR_RETURN(auto right, operand());
      left_height = 1 + std::max(left_height, height_);
      if (left_height > kMaxExpressionHeight) {
        return LexError(node->position,
                        fmt::format("expression nested more than {} levels deep (a long chain of "
                                    "{}: use IN (...) for a list of values)",
                                    kMaxExpressionHeight, keyword));
      }
      node->children.push_back(std::move(left));
      node->children.push_back(std::move(right));
      left = std::move(node);
    }
    height_ = left_height;
    return left;
  }

  Result<std::unique_ptr<Expr>> ParseNot() {
    const bool is_not = KeywordIs(Peek(), "NOT");
    if (!is_not && Peek().kind != Tok::kLParen) {
      height_ = 1;
      return ParsePredicate();
    }
    if (++nesting_ > kMaxExpressionNesting) {
      return LexError(Peek().position, fmt::format("expression nested more than {} levels deep "
                                                   "(parentheses and NOT)",
                                                   kMaxExpressionNesting));
    }
    Result<std::unique_ptr<Expr>> out = is_not ? ParseNotOperand() : ParseParenthesized();
    --nesting_;
    return out;
  }

  Result<std::unique_ptr<Expr>> ParseNotOperand() {
    auto node = std::make_unique<Expr>();
    node->op = Expr::Op::kNot;
    node->position = Next().position;
    GEOLAKE_ASSIGN_OR_RETURN(auto child, ParseNot());
    node->children.push_back(std::move(child));
    ++height_;
    return node;
  }

  Result<std::unique_ptr<Expr>> ParseParenthesized() {
    Next();
    GEOLAKE_ASSIGN_OR_RETURN(auto inner, ParseOr());
    if (Peek().kind != Tok::kRParen) return Error(Peek(), "expected ')'");
    Next();
    return inner;
  }

  Result<Scalar> ParseLiteral() {
    const Token& t = Peek();
    bool minus = false;
    if (t.kind == Tok::kOp && t.text == "-") {
      minus = true;
      Next();
    }
    const Token& v = Next();
    if (v.kind == Tok::kInt) {
      errno = 0;
      char* end = nullptr;
      const long long n = std::strtoll(v.text.c_str(), &end, 10);
      if (errno == ERANGE) return LexError(v.position, "integer out of range: " + v.text);
      return Scalar(static_cast<std::int64_t>(minus ? -n : n));
    }
    if (v.kind == Tok::kFloat) {
      const double d = std::strtod(v.text.c_str(), nullptr);
      return Scalar(minus ? -d : d);
    }
    if (minus) return Error(v, "expected a number after '-'");
    if (v.kind == Tok::kString) return Scalar(v.text);
    if (KeywordIs(v, "TRUE")) return Scalar(true);
    if (KeywordIs(v, "FALSE")) return Scalar(false);
    if (KeywordIs(v, "NULL")) {
      return LexError(v.position, "NULL is not a value here (use IS NULL / IS NOT NULL)");
    }
    return Error(v, "expected a literal (number, 'string', TRUE or FALSE)");
  }

  Result<std::unique_ptr<Expr>> ParsePredicate() {
    const Token& name = Peek();
    if (!(name.kind == Tok::kQuotedIdent || (name.kind == Tok::kIdent && !IsReserved(name)))) {
      return Error(name, "expected a column name");
    }
    Next();
    auto node = std::make_unique<Expr>();
    node->column = name.text;
    node->position = name.position;
    const Token& t = Peek();
    if (t.kind == Tok::kOp && t.text != "-") {
      Next();
      node->op = Expr::Op::kCompare;
      static const std::pair<std::string_view, Expr::Cmp> kOps[] = {
          {"=", Expr::Cmp::kEq}, {"!=", Expr::Cmp::kNe}, {"<>", Expr::Cmp::kNe},
          {"<", Expr::Cmp::kLt}, {"<=", Expr::Cmp::kLe}, {">", Expr::Cmp::kGt},
          {">=", Expr::Cmp::kGe}};
      for (const auto& [text, cmp] : kOps) {
        if (t.text == text) node->cmp = cmp;
      }
      GEOLAKE_ASSIGN_OR_RETURN(Scalar lit, ParseLiteral());
      node->literals.push_back(std::move(lit));
      return node;
    }
    bool negated = false;
    if (KeywordIs(t, "NOT")) {
      Next();
      negated = true;
      if (!KeywordIs(Peek(), "IN") && !KeywordIs(Peek(), "LIKE")) {
        return Error(Peek(), "expected IN or LIKE after NOT");
      }
    }
    if (KeywordIs(Peek(), "IN")) {
      Next();
      node->op = Expr::Op::kIn;
      node->negated = negated;
      if (Peek().kind != Tok::kLParen) return Error(Peek(), "expected '(' after IN");
      Next();
      while (true) {
        GEOLAKE_ASSIGN_OR_RETURN(Scalar lit, ParseLiteral());
        node->literals.push_back(std::move(lit));
        if (Peek().kind == Tok::kComma) {
          Next();
          continue;
        }
        if (Peek().kind == Tok::kRParen) {
          Next();
          break;
        }
        return Error(Peek(), "expected ',' or ')' in the IN list");
      }
      return node;
    }
    if (KeywordIs(Peek(), "LIKE")) {
      Next();
      node->op = Expr::Op::kLike;
      node->negated = negated;
      if (Peek().kind != Tok::kString) return Error(Peek(), "expected a 'pattern' after LIKE");
      node->literals.emplace_back(Next().text);
      return node;
    }
    if (KeywordIs(Peek(), "IS")) {
      Next();
      node->op = Expr::Op::kIsNull;
      if (KeywordIs(Peek(), "NOT")) {
        Next();
        node->negated = true;
      }
      if (!KeywordIs(Peek(), "NULL")) return Error(Peek(), "expected NULL after IS [NOT]");
      Next();
      return node;
    }
    node->op = Expr::Op::kColumn;  // a bare boolean column; BindExpression checks the kind
    return node;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;  // NOTs and parentheses open on the current path
  int height_ = 0;   // of the tree the last Parse* call returned
};

// ---- Binding ---------------------------------------------------------------------------------

std::string_view KindName(ColumnKind k) {
  switch (k) {
    case ColumnKind::kBool:
      return "boolean";
    case ColumnKind::kInt:
      return "integer";
    case ColumnKind::kDouble:
      return "floating-point";
    case ColumnKind::kString:
      return "string";
    case ColumnKind::kOther:
      return "binary";
  }
  return "?";
}

std::string_view ScalarKindName(const Scalar& s) {
  switch (s.index()) {
    case 1:
      return "a boolean";
    case 2:
      return "an integer";
    case 3:
      return "a number";
    case 4:
      return "a string";
    default:
      return "a null";
  }
}

bool LiteralFits(ColumnKind kind, const Scalar& lit) {
  switch (kind) {
    case ColumnKind::kBool:
      return std::holds_alternative<bool>(lit);
    case ColumnKind::kInt:
    case ColumnKind::kDouble:
      return std::holds_alternative<std::int64_t>(lit) || std::holds_alternative<double>(lit);
    case ColumnKind::kString:
      return std::holds_alternative<std::string>(lit);
    case ColumnKind::kOther:
      return false;
  }
  return false;
}

Expr::Cmp Negate(Expr::Cmp c) {
  switch (c) {
    case Expr::Cmp::kEq:
      return Expr::Cmp::kNe;
    case Expr::Cmp::kNe:
      return Expr::Cmp::kEq;
    case Expr::Cmp::kLt:
      return Expr::Cmp::kGe;
    case Expr::Cmp::kLe:
      return Expr::Cmp::kGt;
    case Expr::Cmp::kGt:
      return Expr::Cmp::kLe;
    case Expr::Cmp::kGe:
      return Expr::Cmp::kLt;
  }
  return c;
}

// Below this many literals the pairwise loop is as fast as hashing the value.
constexpr std::size_t kInSetMinLiterals = 8;

std::shared_ptr<const InSet> MakeInSet(const std::vector<Scalar>& literals) {
  auto set = std::make_shared<InSet>();
  for (const Scalar& lit : literals) {
    switch (lit.index()) {
      case 1:
        (std::get<bool>(lit) ? set->has_true : set->has_false) = true;
        break;
      case 2:
        set->ints.insert(std::get<std::int64_t>(lit));
        set->ints_as_double.insert(static_cast<double>(std::get<std::int64_t>(lit)));
        break;
      case 3:
        // NaN equals nothing (CompareScalars): it never matches, so it is left out.
        if (!std::isnan(std::get<double>(lit))) set->doubles.insert(std::get<double>(lit));
        break;
      case 4:
        set->strings.insert(std::get<std::string>(lit));
        break;
      default:
        break;
    }
  }
  return set;
}

Status Bind(Expr* e, const std::vector<ColumnInfo>& columns, bool negate) {
  if (e->op == Expr::Op::kNot) {
    std::unique_ptr<Expr> child = std::move(e->children[0]);
    GEOLAKE_RETURN_NOT_OK(Bind(child.get(), columns, !negate));
    *e = std::move(*child);
    return Status::OK();
  }
  if (e->op == Expr::Op::kAnd || e->op == Expr::Op::kOr) {
    if (negate) e->op = e->op == Expr::Op::kAnd ? Expr::Op::kOr : Expr::Op::kAnd;  // De Morgan
    for (auto& c : e->children) GEOLAKE_RETURN_NOT_OK(Bind(c.get(), columns, negate));
    return Status::OK();
  }
  // A leaf: resolve the column, exact name first, then case-insensitively.
  int found = -1;
  for (std::size_t i = 0; i < columns.size() && found < 0; ++i) {
    if (columns[i].name == e->column) found = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < columns.size() && found < 0; ++i) {
    const std::string& n = columns[i].name;
    if (n.size() == e->column.size() &&
        std::equal(n.begin(), n.end(), e->column.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      found = static_cast<int>(i);
    }
  }
  if (found < 0) {
    return LexError(e->position, fmt::format("unknown column '{}'", e->column));
  }
  e->column_index = found;
  const ColumnInfo& col = columns[found];
  switch (e->op) {
    case Expr::Op::kColumn:
      if (col.kind != ColumnKind::kBool) {
        return LexError(e->position, fmt::format("column '{}' is {}, not boolean; compare it with "
                                                 "a value",
                                                 col.name, KindName(col.kind)));
      }
      e->op = Expr::Op::kCompare;
      e->cmp = Expr::Cmp::kEq;
      e->literals = {Scalar(true)};
      break;
    case Expr::Op::kCompare:
    case Expr::Op::kIn:
      for (const Scalar& lit : e->literals) {
        if (!LiteralFits(col.kind, lit)) {
          return LexError(e->position,
                          fmt::format("type mismatch: column '{}' is {}, compared "
                                      "with {} literal",
                                      col.name, KindName(col.kind), ScalarKindName(lit)));
        }
      }
      if (e->op == Expr::Op::kIn && e->literals.size() > kInSetMinLiterals) {
        e->in_set = MakeInSet(e->literals);
      }
      break;
    case Expr::Op::kLike:
      if (col.kind != ColumnKind::kString) {
        return LexError(e->position, fmt::format("type mismatch: LIKE needs a string column, "
                                                 "'{}' is {}",
                                                 col.name, KindName(col.kind)));
      }
      break;
    default:
      break;
  }
  if (negate) {
    if (e->op == Expr::Op::kCompare) {
      e->cmp = Negate(e->cmp);
    } else {
      e->negated = !e->negated;
    }
  }
  return Status::OK();
}

// ---- Evaluation ------------------------------------------------------------------------------

bool CmpHolds(Expr::Cmp cmp, int c) {
  switch (cmp) {
    case Expr::Cmp::kEq:
      return c == 0;
    case Expr::Cmp::kNe:
      return c != 0;
    case Expr::Cmp::kLt:
      return c < 0;
    case Expr::Cmp::kLe:
      return c <= 0;
    case Expr::Cmp::kGt:
      return c > 0;
    case Expr::Cmp::kGe:
      return c >= 0;
  }
  return false;
}

// Decode one UTF-8 character's length at s[i] (1 for invalid bytes).
std::size_t Utf8Len(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  return std::min(n, s.size() - i);
}

// The literal text before a LIKE pattern's first wildcard.
std::string LikePrefix(std::string_view pattern) {
  const std::size_t stop = pattern.find_first_of("%_");
  return std::string(pattern.substr(0, stop));
}

}  // namespace

Result<std::unique_ptr<Expr>> ParseExpression(std::string_view text) {
  GEOLAKE_ASSIGN_OR_RETURN(auto tokens, Lex(text));
  if (tokens.size() == 1) return LexError(0, "empty expression");
  Parser parser(std::move(tokens));
  return parser.ParseAll();
}

Status BindExpression(Expr* expr, const std::vector<ColumnInfo>& columns) {
  return Bind(expr, columns, false);
}

bool InSet::Contains(const Scalar& value) const {
  switch (value.index()) {
    case 1:
      return std::get<bool>(value) ? has_true : has_false;
    case 2: {
      const std::int64_t n = std::get<std::int64_t>(value);
      return ints.count(n) > 0 || doubles.count(static_cast<double>(n)) > 0;
    }
    case 3: {
      const double d = std::get<double>(value);
      if (std::isnan(d)) return false;
      // -0.0 and 0.0 hash and compare equal, as CompareScalars has them.
      return doubles.count(d) > 0 || ints_as_double.count(d) > 0;
    }
    case 4:
      return strings.count(std::get<std::string>(value)) > 0;
    default:
      return false;
  }
}

std::optional<int> CompareScalars(const Scalar& a, const Scalar& b) {
  const auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.index() == b.index()) {
    switch (a.index()) {
      case 1:
        return sign(std::get<bool>(a), std::get<bool>(b));
      case 2:
        return sign(std::get<std::int64_t>(a), std::get<std::int64_t>(b));
      case 3: {
        const double x = std::get<double>(a), y = std::get<double>(b);
        if (std::isnan(x) || std::isnan(y)) return std::nullopt;
        return sign(x, y);
      }
      case 4: {
        const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
      }
      default:
        return std::nullopt;
    }
  }
  const bool a_num = a.index() == 2 || a.index() == 3;
  const bool b_num = b.index() == 2 || b.index() == 3;
  if (!a_num || !b_num) return std::nullopt;
  const double x =
      a.index() == 2 ? static_cast<double>(std::get<std::int64_t>(a)) : std::get<double>(a);
  const double y =
      b.index() == 2 ? static_cast<double>(std::get<std::int64_t>(b)) : std::get<double>(b);
  if (std::isnan(x) || std::isnan(y)) return std::nullopt;
  return sign(x, y);
}

bool LikeMatch(std::string_view text, std::string_view pattern) {
  // Iterative matcher with one backtrack point for the last '%' (linear for typical patterns).
  std::size_t t = 0, p = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = ++p;
      star_t = t;
    } else if (p < pattern.size() && pattern[p] == '_') {
      t += Utf8Len(text, t);
      ++p;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++t;
      ++p;
    } else if (star_p != std::string_view::npos) {
      star_t += Utf8Len(text, star_t);
      t = star_t;
      p = star_p;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

Truth Evaluate(const Expr& expr, const std::function<Scalar(int)>& value) {
  switch (expr.op) {
    case Expr::Op::kAnd: {
      const Truth a = Evaluate(*expr.children[0], value);
      if (a == Truth::kFalse) return Truth::kFalse;
      const Truth b = Evaluate(*expr.children[1], value);
      if (b == Truth::kFalse) return Truth::kFalse;
      return a == Truth::kTrue && b == Truth::kTrue ? Truth::kTrue : Truth::kNull;
    }
    case Expr::Op::kOr: {
      const Truth a = Evaluate(*expr.children[0], value);
      if (a == Truth::kTrue) return Truth::kTrue;
      const Truth b = Evaluate(*expr.children[1], value);
      if (b == Truth::kTrue) return Truth::kTrue;
      return a == Truth::kFalse && b == Truth::kFalse ? Truth::kFalse : Truth::kNull;
    }
    case Expr::Op::kNot: {
      const Truth a = Evaluate(*expr.children[0], value);
      return a == Truth::kNull ? a : (a == Truth::kTrue ? Truth::kFalse : Truth::kTrue);
    }
    default:
      break;
  }
  const Scalar v = value(expr.column_index);
  const bool is_null = std::holds_alternative<std::monostate>(v);
  const auto flip = [&](bool b) { return (b != expr.negated) ? Truth::kTrue : Truth::kFalse; };
  switch (expr.op) {
    case Expr::Op::kIsNull:
      return flip(is_null);
    case Expr::Op::kCompare: {
      if (is_null) return Truth::kNull;
      const auto c = CompareScalars(v, expr.literals[0]);
      if (!c) return expr.cmp == Expr::Cmp::kNe ? Truth::kTrue : Truth::kFalse;  // NaN
      return CmpHolds(expr.cmp, *c) ? Truth::kTrue : Truth::kFalse;
    }
    case Expr::Op::kIn: {
      if (is_null) return Truth::kNull;
      if (expr.in_set) return flip(expr.in_set->Contains(v));
      bool hit = false;
      for (const Scalar& lit : expr.literals) {
        const auto c = CompareScalars(v, lit);
        if (c && *c == 0) hit = true;
      }
      return flip(hit);
    }
    case Expr::Op::kLike:
      if (is_null || !std::holds_alternative<std::string>(v)) return Truth::kNull;
      return flip(LikeMatch(std::get<std::string>(v), std::get<std::string>(expr.literals[0])));
    default:
      return Truth::kNull;
  }
}

bool MayMatch(const Expr& expr, const std::function<const ColumnBounds*(int)>& bounds) {
  switch (expr.op) {
    case Expr::Op::kAnd:
      return MayMatch(*expr.children[0], bounds) && MayMatch(*expr.children[1], bounds);
    case Expr::Op::kOr:
      return MayMatch(*expr.children[0], bounds) || MayMatch(*expr.children[1], bounds);
    case Expr::Op::kNot:
      return true;  // never left after binding
    default:
      break;
  }
  const ColumnBounds* b = bounds(expr.column_index);
  if (b == nullptr) return true;
  const bool all_null = b->null_count && b->value_count && *b->null_count >= *b->value_count;
  if (expr.op == Expr::Op::kIsNull) {
    if (!expr.negated) return !b->null_count || *b->null_count > 0;
    return !all_null;
  }
  // Every other predicate is null (not true) on a null value.
  if (all_null) return false;
  if (!b->min || !b->max) return true;
  const Scalar& lo = *b->min;
  const Scalar& hi = *b->max;
  const auto may_equal = [&](const Scalar& v) {
    const auto a = CompareScalars(lo, v), c = CompareScalars(hi, v);
    return !a || !c || (*a <= 0 && *c >= 0);
  };
  switch (expr.op) {
    case Expr::Op::kCompare: {
      const Scalar& v = expr.literals[0];
      const auto a = CompareScalars(lo, v), c = CompareScalars(hi, v);
      if (!a || !c) return true;
      switch (expr.cmp) {
        case Expr::Cmp::kEq:
          return *a <= 0 && *c >= 0;
        // NaN values are in no min/max, and != is true on them: only exact doubles can prune.
        case Expr::Cmp::kNe:
          return !(*a == 0 && *c == 0) || std::holds_alternative<double>(lo);
        case Expr::Cmp::kLt:
          return *a < 0;
        case Expr::Cmp::kLe:
          return *a <= 0;
        case Expr::Cmp::kGt:
          return *c > 0;
        case Expr::Cmp::kGe:
          return *c >= 0;
      }
      return true;
    }
    case Expr::Op::kIn: {
      if (expr.negated) {
        if (CompareScalars(lo, hi) != 0) return true;
        for (const Scalar& lit : expr.literals) {
          if (CompareScalars(lo, lit) == 0) return false;
        }
        return true;
      }
      return std::any_of(expr.literals.begin(), expr.literals.end(), may_equal);
    }
    case Expr::Op::kLike: {
      if (expr.negated) return true;
      if (!std::holds_alternative<std::string>(lo) || !std::holds_alternative<std::string>(hi)) {
        return true;
      }
      const std::string prefix = LikePrefix(std::get<std::string>(expr.literals[0]));
      if (prefix.empty()) return true;
      const std::string& min_s = std::get<std::string>(lo);
      const std::string& max_s = std::get<std::string>(hi);
      // Matching strings start with `prefix`: they lie in [prefix, prefix + anything].
      if (max_s.compare(0, prefix.size(), prefix) < 0) return false;
      if (min_s.compare(0, prefix.size(), prefix) > 0) return false;
      return true;
    }
    default:
      return true;
  }
}

std::vector<int> ReferencedColumns(const Expr& expr) {
  std::vector<int> out;
  const std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.column_index >= 0) out.push_back(e.column_index);
    for (const auto& c : e.children) walk(*c);
  };
  walk(expr);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::unique_ptr<Expr> MakeAnd(std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
  if (!a) return b;
  if (!b) return a;
  auto node = std::make_unique<Expr>();
  node->op = Expr::Op::kAnd;
  node->children.push_back(std::move(a));
  node->children.push_back(std::move(b));
  return node;
}

std::unique_ptr<Expr> MakeCompare(std::string column, Expr::Cmp cmp, Scalar value) {
  auto node = std::make_unique<Expr>();
  node->op = Expr::Op::kCompare;
  node->cmp = cmp;
  node->column = std::move(column);
  node->literals.push_back(std::move(value));
  return node;
}

namespace {
std::string ScalarText(const Scalar& s) {
  switch (s.index()) {
    case 1:
      return std::get<bool>(s) ? "TRUE" : "FALSE";
    case 2:
      return std::to_string(std::get<std::int64_t>(s));
    case 3:
      return fmt::format("{}", std::get<double>(s));
    case 4: {
      std::string out = "'";
      for (char c : std::get<std::string>(s)) {
        out += c;
        if (c == '\'') out += c;
      }
      return out + "'";
    }
    default:
      return "NULL";
  }
}
}  // namespace

std::string ExprToString(const Expr& e) {
  static const char* kCmp[] = {"=", "!=", "<", "<=", ">", ">="};
  switch (e.op) {
    case Expr::Op::kAnd:
    case Expr::Op::kOr:
      return "(" + ExprToString(*e.children[0]) + (e.op == Expr::Op::kAnd ? " AND " : " OR ") +
             ExprToString(*e.children[1]) + ")";
    case Expr::Op::kNot:
      return "NOT " + ExprToString(*e.children[0]);
    case Expr::Op::kCompare:
      return e.column + " " + kCmp[static_cast<int>(e.cmp)] + " " + ScalarText(e.literals[0]);
    case Expr::Op::kIn: {
      std::string out = e.column + (e.negated ? " NOT IN (" : " IN (");
      for (std::size_t i = 0; i < e.literals.size(); ++i) {
        out += (i ? ", " : "") + ScalarText(e.literals[i]);
      }
      return out + ")";
    }
    case Expr::Op::kIsNull:
      return e.column + (e.negated ? " IS NOT NULL" : " IS NULL");
    case Expr::Op::kLike:
      return e.column + (e.negated ? " NOT LIKE " : " LIKE ") + ScalarText(e.literals[0]);
    case Expr::Op::kColumn:
      return e.column;
  }
  return "?";
}

}  // namespace geolake::query
