#include "access_analysis.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/Builtins.h"

namespace cusync::tile_rewriter {
namespace {

// The root of accesses through `this` (members of the object a method runs on).
const char kThisRoot = 0;

bool isPrefixPath(const std::string& prefix, const std::string& path) {
  if (path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '*';
}

// Walks one statement (or one callee body) and records its accesses into a StatementEffects.
class EffectCollector {
public:
  // `ofCallee`: the statement is a callee's body, where `return` ends the call rather than skipping code after the
  // annotated statement.
  EffectCollector(AccessAnalyzer& analyzer, StatementEffects& out, bool ofCallee = false)
      : analyzer_(analyzer), out_(out), ofCallee_(ofCallee) {}

  void statement(const clang::Stmt* statement);
  void read(const clang::Expr* expression);

private:
  std::optional<StorageLocation> lvalue(const clang::Expr* expression);
  std::optional<StorageLocation> pointee(const clang::Expr* pointer);
  std::optional<StorageLocation> declLocation(const clang::ValueDecl* decl);
  void call(const clang::CallExpr* call);
  void construct(const clang::CXXConstructExpr* construction);
  void argument(const clang::Expr* argument, clang::QualType parameterType, CalleeKind kind, const std::string& callee,
                bool readOnlyInEveryCandidate = false);
  std::optional<StorageLocation> designated(const clang::Expr* expression);
  std::optional<StorageLocation> derivedLocation(const clang::Expr* call);
  void object(const clang::Expr* object, bool isArrow, bool mayWrite);
  void escape(const clang::Expr* expression);
  void readValue(const clang::Expr* expression);
  void dependentOperator(const clang::CXXOperatorCallExpr* call);

  void recordRead(const StorageLocation& location, clang::SourceLocation where) {
    out_.reads.push_back({location, where});
  }
  void recordWrite(const StorageLocation& location, clang::SourceLocation where) {
    out_.writes.push_back({location, where});
  }
  void barrier(std::string reason, clang::SourceLocation where) { out_.barriers.push_back({std::move(reason), where}); }
  StorageLocation temporary(const clang::Expr* expression) {
    return {StorageLocation::RootKind::Temporary, expression, "a temporary", ""};
  }

  AccessAnalyzer& analyzer_;
  StatementEffects& out_;
  int enclosingLoops_ = 0;
  int enclosingSwitches_ = 0;
  int innerScopes_ = 0;  // statements entered below the analyzed one; 0: a declaration there is in the outer scope
  // Statements entered that choose whether or how often their children run (loops, branches, labels, statement
  // expressions); 0: on the analyzed statement's straight-line path.
  int controlFlow_ = 0;
  const clang::Expr* statementExpression_ = nullptr;  // the expression statement being read, if any
  bool ofCallee_ = false;
};

std::optional<StorageLocation> EffectCollector::declLocation(const clang::ValueDecl* decl) {
  if (decl == nullptr) return std::nullopt;
  if (!clang::isa<clang::VarDecl, clang::BindingDecl, clang::FieldDecl>(decl)) return std::nullopt;
  out_.namesUsed.emplace_back(decl->getNameAsString(), decl->getCanonicalDecl());
  return StorageLocation{StorageLocation::RootKind::Declaration, decl->getCanonicalDecl(), decl->getNameAsString(), ""};
}

void EffectCollector::statement(const clang::Stmt* statement) {
  using namespace clang;
  if (statement == nullptr) return;
  if (const auto* expression = dyn_cast<Expr>(statement)) {
    const Expr* enclosing = statementExpression_;
    statementExpression_ = expression;
    read(expression);
    statementExpression_ = enclosing;
    return;
  }
  if (const auto* declaration = dyn_cast<DeclStmt>(statement)) {
    for (const Decl* decl : declaration->decls()) {
      const auto* variable = dyn_cast<VarDecl>(decl);
      if (variable == nullptr) continue;
      if (innerScopes_ == 0) out_.declarations.push_back(variable);
      else out_.innerDeclarations.insert(variable->getCanonicalDecl());
      if (const Expr* init = variable->getInit()) {
        // `T& r = x;` makes `r` another name for `x`: count it as an escape of `x`.
        if (variable->getType()->isReferenceType()) escape(init);
        else read(init);
      }
      // A __shared__ or static variable's declaration runs nothing (it exists for the whole block or program); any
      // other declaration defines its variable where it stands.
      const bool executes = variable->getInit() != nullptr ||
                            (!variable->hasAttr<CUDASharedAttr>() && !variable->isStaticLocal());
      if (auto location = declLocation(variable); location && executes)
        recordWrite(*location, variable->getLocation());
    }
    return;
  }
  if (const auto* returned = dyn_cast<ReturnStmt>(statement); returned && ofCallee_)
    return read(returned->getRetValue());
  if (isa<ReturnStmt, CoreturnStmt>(statement)) return barrier("contains a 'return'", statement->getBeginLoc());
  if (isa<GotoStmt, IndirectGotoStmt>(statement)) return barrier("contains a 'goto'", statement->getBeginLoc());
  if (isa<AsmStmt>(statement)) return barrier("contains inline assembly", statement->getBeginLoc());
  if (isa<CXXTryStmt>(statement)) return barrier("contains a 'try' block", statement->getBeginLoc());
  if (isa<BreakStmt>(statement)) {
    if (enclosingLoops_ + enclosingSwitches_ == 0)
      barrier("contains a 'break' that leaves the statement", statement->getBeginLoc());
    return;
  }
  if (isa<ContinueStmt>(statement)) {
    if (enclosingLoops_ == 0) barrier("contains a 'continue' that leaves the statement", statement->getBeginLoc());
    return;
  }
  const bool isLoop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(statement);
  const bool isSwitch = isa<SwitchStmt>(statement);
  enclosingLoops_ += isLoop;
  enclosingSwitches_ += isSwitch;
  const bool choosesExecution = !isa<CompoundStmt>(statement);
  ++innerScopes_;  // every child of a compound statement, a loop, a condition ... has a scope of its own
  controlFlow_ += choosesExecution;
  for (const Stmt* child : statement->children()) this->statement(child);
  controlFlow_ -= choosesExecution;
  --innerScopes_;
  enclosingLoops_ -= isLoop;
  enclosingSwitches_ -= isSwitch;
}

void EffectCollector::read(const clang::Expr* expression) {
  using namespace clang;
  if (expression == nullptr) return;
  if (const auto* paren = dyn_cast<ParenExpr>(expression)) return read(paren->getSubExpr());
  if (const auto* cast = dyn_cast<ImplicitCastExpr>(expression)) {
    switch (cast->getCastKind()) {
      case CK_LValueToRValue:
        if (auto location = lvalue(cast->getSubExpr())) recordRead(*location, cast->getExprLoc());
        else barrier("reads memory that the analysis cannot trace to a variable", cast->getExprLoc());
        return;
      case CK_ArrayToPointerDecay: return escape(cast->getSubExpr());
      case CK_FunctionToPointerDecay:
      case CK_BuiltinFnToFnPtr: return;
      default: return read(cast->getSubExpr());
    }
  }
  if (const auto* cast = dyn_cast<ExplicitCastExpr>(expression)) return read(cast->getSubExpr());
  if (const auto* reference = dyn_cast<DeclRefExpr>(expression)) {
    // An lvalue used without being read is bound to a reference or has its address taken: it escapes. In template
    // patterns, dependent expressions carry no lvalue-to-rvalue casts, so a dependent name is taken as a read.
    if (!isa<VarDecl, BindingDecl>(reference->getDecl())) return;
    if (reference->isTypeDependent() || reference->isValueDependent()) {
      if (auto location = declLocation(reference->getDecl())) recordRead(*location, reference->getLocation());
      return;
    }
    return escape(reference);
  }
  if (isa<MemberExpr, ArraySubscriptExpr, CXXDependentScopeMemberExpr>(expression)) {
    if (expression->isTypeDependent() || !expression->isGLValue()) {
      if (auto location = lvalue(expression)) recordRead(*location, expression->getExprLoc());
      return;
    }
    return escape(expression);
  }
  if (const auto* unary = dyn_cast<UnaryOperator>(expression)) {
    switch (unary->getOpcode()) {
      case UO_AddrOf: return escape(unary->getSubExpr());
      case UO_PreInc:
      case UO_PreDec:
      case UO_PostInc:
      case UO_PostDec:
        if (auto location = lvalue(unary->getSubExpr())) {
          recordRead(*location, unary->getExprLoc());
          recordWrite(*location, unary->getExprLoc());
        } else {
          barrier("modifies memory that the analysis cannot trace to a variable", unary->getExprLoc());
        }
        return;
      case UO_Deref:
        if (unary->isTypeDependent()) {
          if (auto location = lvalue(unary)) recordRead(*location, unary->getExprLoc());
          return;
        }
        return escape(unary);
      default: return read(unary->getSubExpr());
    }
  }
  if (const auto* binary = dyn_cast<BinaryOperator>(expression)) {
    if (binary->isAssignmentOp()) {
      if (auto location = lvalue(binary->getLHS())) {
        if (binary->isCompoundAssignmentOp()) recordRead(*location, binary->getOperatorLoc());
        recordWrite(*location, binary->getOperatorLoc());
      } else {
        barrier("writes memory that the analysis cannot trace to a variable", binary->getOperatorLoc());
      }
      return read(binary->getRHS());
    }
    read(binary->getLHS());
    return read(binary->getRHS());
  }
  if (const auto* call = dyn_cast<CallExpr>(expression)) return this->call(call);
  if (const auto* construction = dyn_cast<CXXConstructExpr>(expression)) return construct(construction);
  if (const auto* pseudo = dyn_cast<PseudoObjectExpr>(expression)) {
    // `threadIdx.x` is a property access (MSPropertyRefExpr); its getter is a builtin read of a special register.
    if (const auto* property = dyn_cast<MSPropertyRefExpr>(pseudo->getSyntacticForm()->IgnoreParens())) {
      if (auto base = lvalue(property->getBaseExpr()))
        recordRead(base->member(property->getPropertyDecl()->getNameAsString()), property->getMemberLoc());
      return;
    }
    return barrier("assigns through a property", pseudo->getExprLoc());
  }
  if (const auto* lambda = dyn_cast<LambdaExpr>(expression)) {
    for (const LambdaCapture& capture : lambda->captures()) {
      if (!capture.capturesVariable()) continue;
      auto location = declLocation(capture.getCapturedVar());
      if (!location) continue;
      recordRead(*location, capture.getLocation());
      if (capture.getCaptureKind() == LCK_ByRef) recordWrite(*location, capture.getLocation());
    }
    return;
  }
  if (const auto* statementExpression = dyn_cast<StmtExpr>(expression)) {
    const Expr* enclosing = statementExpression_;
    ++controlFlow_;  // its statements run inside an expression, in an order the analysis does not follow
    statement(statementExpression->getSubStmt());
    --controlFlow_;
    statementExpression_ = enclosing;
    return;
  }
  if (const auto* defaultArgument = dyn_cast<CXXDefaultArgExpr>(expression)) return read(defaultArgument->getExpr());
  if (const auto* defaultInit = dyn_cast<CXXDefaultInitExpr>(expression)) return read(defaultInit->getExpr());
  if (const auto* dependentName = dyn_cast<DependentScopeDeclRefExpr>(expression)) {
    const std::string name = dependentName->getNameInfo().getAsString();
    recordRead({StorageLocation::RootKind::DependentName, analyzer_.internName(name), name, ""},
               dependentName->getLocation());
    return;
  }
  if (isa<UnaryExprOrTypeTraitExpr, CXXNoexceptExpr, TypeTraitExpr, OverloadExpr>(expression)) return;
  if (isa<RecoveryExpr>(expression) || expression->containsErrors())
    return barrier("contains code that Clang could not parse", expression->getExprLoc());
  if (isa<AtomicExpr>(expression)) return barrier("performs an atomic operation", expression->getExprLoc());
  if (isa<CXXThrowExpr>(expression)) return barrier("throws an exception", expression->getExprLoc());
  if (isa<CXXNewExpr, CXXDeleteExpr>(expression))
    return barrier("allocates or frees memory", expression->getExprLoc());
  if (isa<CoroutineSuspendExpr>(expression)) return barrier("suspends a coroutine", expression->getExprLoc());
  // Everything else (literals, arithmetic, conditional operators, initializer lists, temporaries, cleanups)
  // evaluates its operands and has no effect of its own.
  for (const Stmt* child : expression->children()) {
    if (const auto* childExpression = dyn_cast_or_null<Expr>(child)) read(childExpression);
    else statement(child);
  }
}

// The storage an lvalue expression designates; records the reads needed to compute it (indices, pointers).
std::optional<StorageLocation> EffectCollector::lvalue(const clang::Expr* expression) {
  using namespace clang;
  if (const auto* paren = dyn_cast<ParenExpr>(expression)) return lvalue(paren->getSubExpr());
  if (const auto* cast = dyn_cast<ImplicitCastExpr>(expression)) {
    switch (cast->getCastKind()) {
      case CK_NoOp:
      case CK_DerivedToBase:
      case CK_UncheckedDerivedToBase:
      case CK_LValueBitCast: return lvalue(cast->getSubExpr());
      default: break;
    }
  }
  if (const auto* reference = dyn_cast<DeclRefExpr>(expression)) return declLocation(reference->getDecl());
  if (const auto* member = dyn_cast<MemberExpr>(expression)) {
    const ValueDecl* decl = member->getMemberDecl();
    if (const auto* staticMember = dyn_cast<VarDecl>(decl)) return declLocation(staticMember);
    const std::string name = decl->getNameAsString();
    if (member->isArrow()) {
      auto base = pointee(member->getBase());
      return base ? std::optional(base->member(name)) : std::nullopt;
    }
    if (!member->getBase()->isGLValue()) {
      read(member->getBase());
      return temporary(member);
    }
    auto base = lvalue(member->getBase());
    return base ? std::optional(base->member(name)) : std::nullopt;
  }
  if (const auto* member = dyn_cast<CXXDependentScopeMemberExpr>(expression)) {
    const std::string name = member->getMember().getAsString();
    std::optional<StorageLocation> base;
    if (member->isImplicitAccess()) base = StorageLocation{StorageLocation::RootKind::This, &kThisRoot, "this", "*"};
    else if (member->isArrow()) base = pointee(member->getBase());
    else base = lvalue(member->getBase());
    return base ? std::optional(base->member(name)) : std::nullopt;
  }
  if (const auto* subscript = dyn_cast<ArraySubscriptExpr>(expression)) {
    read(subscript->getIdx());
    const Expr* base = subscript->getBase();
    if (const auto* decay = dyn_cast<ImplicitCastExpr>(base->IgnoreParens());
        decay && decay->getCastKind() == CK_ArrayToPointerDecay)
      return lvalue(decay->getSubExpr());
    return pointee(base);
  }
  if (const auto* unary = dyn_cast<UnaryOperator>(expression); unary && unary->getOpcode() == UO_Deref)
    return pointee(unary->getSubExpr());
  if (const auto* dependentName = dyn_cast<DependentScopeDeclRefExpr>(expression)) {
    const std::string name = dependentName->getNameInfo().getAsString();
    return StorageLocation{StorageLocation::RootKind::DependentName, analyzer_.internName(name), name, ""};
  }
  if (const auto* operatorCall = dyn_cast<CXXOperatorCallExpr>(expression);
      operatorCall && operatorCall->isTypeDependent() && operatorCall->getNumArgs() >= 1 &&
      (operatorCall->getOperator() == OO_Subscript || operatorCall->getOperator() == OO_Star)) {
    // `a[i]` / `*p` on a dependent type: taken as the builtin operator on an array or pointer.
    for (unsigned i = 1; i < operatorCall->getNumArgs(); ++i) read(operatorCall->getArg(i));
    auto base = lvalue(operatorCall->getArg(0));
    if (base) recordRead(*base, operatorCall->getExprLoc());
    return base ? std::optional(base->pointee()) : std::nullopt;
  }
  if (isa<MaterializeTemporaryExpr, CompoundLiteralExpr, StringLiteral>(expression)) {
    for (const Stmt* child : expression->children())
      if (const auto* childExpression = dyn_cast_or_null<Expr>(child)) read(childExpression);
    return temporary(expression);
  }
  // Calls returning references, conditional lvalues, ...: evaluate for their effects, location unknown.
  read(expression);
  return std::nullopt;
}

// The storage a pointer expression points into; records the read of the pointer itself.
std::optional<StorageLocation> EffectCollector::pointee(const clang::Expr* pointer) {
  using namespace clang;
  // An array not yet decayed (template patterns keep dependent arrays undecayed) points to itself.
  if (pointer->getType()->isArrayType()) return lvalue(pointer);
  if (const auto* paren = dyn_cast<ParenExpr>(pointer)) return pointee(paren->getSubExpr());
  if (const auto* cast = dyn_cast<ImplicitCastExpr>(pointer)) {
    switch (cast->getCastKind()) {
      case CK_LValueToRValue: {
        auto location = lvalue(cast->getSubExpr());
        if (!location) return std::nullopt;
        recordRead(*location, cast->getExprLoc());
        return location->pointee();
      }
      case CK_ArrayToPointerDecay: return lvalue(cast->getSubExpr());
      default: return pointee(cast->getSubExpr());
    }
  }
  if (const auto* cast = dyn_cast<ExplicitCastExpr>(pointer)) return pointee(cast->getSubExpr());
  if (const auto* unary = dyn_cast<UnaryOperator>(pointer); unary && unary->getOpcode() == UO_AddrOf)
    return lvalue(unary->getSubExpr());
  if (const auto* binary = dyn_cast<BinaryOperator>(pointer);
      binary && (binary->getOpcode() == BO_Add || binary->getOpcode() == BO_Sub)) {
    const bool leftIsPointer = !binary->getLHS()->getType()->isIntegralOrEnumerationType();
    read(leftIsPointer ? binary->getRHS() : binary->getLHS());
    return pointee(leftIsPointer ? binary->getLHS() : binary->getRHS());
  }
  if (isa<CXXThisExpr>(pointer)) return StorageLocation{StorageLocation::RootKind::This, &kThisRoot, "this", "*"};
  if (pointer->isTypeDependent() || isa<DeclRefExpr, MemberExpr>(pointer)) {
    // Dependent pointer-like names carry no lvalue-to-rvalue cast.
    auto location = lvalue(pointer);
    if (!location) return std::nullopt;
    recordRead(*location, pointer->getExprLoc());
    return location->pointee();
  }
  read(pointer);
  return std::nullopt;
}

// Reads the value of an expression that may be an lvalue without a conversion: an argument of a dependent call
// in a template pattern, or one bound to a const reference.
void EffectCollector::readValue(const clang::Expr* expression) {
  if (expression->isGLValue() && !clang::isa<clang::CallExpr>(expression->IgnoreParens())) {
    if (auto location = lvalue(expression)) recordRead(*location, expression->getExprLoc());
    return;
  }
  read(expression);
}

// Taking a variable's address or binding a reference to it outside a call: whoever holds it may read or write it.
void EffectCollector::escape(const clang::Expr* expression) {
  auto location = lvalue(expression);
  if (!location) return;
  recordRead(*location, expression->getExprLoc());
  recordWrite(*location, expression->getExprLoc());
}

void EffectCollector::object(const clang::Expr* object, bool isArrow, bool mayWrite) {
  if (object == nullptr) return;
  std::optional<StorageLocation> location;
  if (isArrow) location = pointee(object);
  else if (object->isGLValue() || object->isTypeDependent()) location = lvalue(object);
  else read(object);
  if (!location) return;
  recordRead(*location, object->getExprLoc());
  if (mayWrite) recordWrite(*location, object->getExprLoc());
}

// The storage a view returned by a call designates: everything reachable from the call's object (a tensor's
// `tensor(_, k)`, a buffer's `data()`); nothing for other calls.
std::optional<StorageLocation> EffectCollector::derivedLocation(const clang::Expr* call) {
  using namespace clang;
  const Expr* object = nullptr;
  bool isArrow = false;
  if (const auto* operatorCall = dyn_cast<CXXOperatorCallExpr>(call)) {
    if (operatorCall->getOperator() == OO_Call || operatorCall->getOperator() == OO_Subscript)
      object = operatorCall->getArg(0);
  } else if (const auto* memberCall = dyn_cast<CXXMemberCallExpr>(call)) {
    object = memberCall->getImplicitObjectArgument();
    if (const auto* member = dyn_cast<MemberExpr>(memberCall->getCallee()->IgnoreParenImpCasts()))
      isArrow = member->isArrow();
  } else if (const auto* plainCall = dyn_cast<CallExpr>(call)) {
    const Expr* callee = plainCall->getCallee()->IgnoreParenImpCasts();
    if (const auto* member = dyn_cast<CXXDependentScopeMemberExpr>(callee); member && !member->isImplicitAccess()) {
      object = member->getBase();
      isArrow = member->isArrow();
    } else if (const auto* member = dyn_cast<UnresolvedMemberExpr>(callee); member && !member->isImplicitAccess()) {
      object = member->getBase();
      isArrow = member->isArrow();
    } else if (const auto* reference = dyn_cast<DeclRefExpr>(callee); reference && isa<VarDecl>(reference->getDecl())) {
      object = reference;
    }
  }
  if (object == nullptr) return std::nullopt;
  std::optional<StorageLocation> location = isArrow ? pointee(object) : lvalue(object);
  if (location) location->reachable = true;
  return location;
}

// The storage an argument designates: the lvalue it names, or for a temporary made by a call on an object (a view),
// what that object reaches. Records the reads needed to evaluate it.
std::optional<StorageLocation> EffectCollector::designated(const clang::Expr* expression) {
  using namespace clang;
  const Expr* stripped = expression->IgnoreImplicit()->IgnoreParens();
  while (true) {
    if (const auto* temporary = dyn_cast<MaterializeTemporaryExpr>(stripped)) stripped = temporary->getSubExpr();
    else if (const auto* bind = dyn_cast<CXXBindTemporaryExpr>(stripped)) stripped = bind->getSubExpr();
    else if (const auto* cleanups = dyn_cast<ExprWithCleanups>(stripped)) stripped = cleanups->getSubExpr();
    else if (const auto* cast = dyn_cast<ImplicitCastExpr>(stripped); cast && cast->getCastKind() == CK_NoOp)
      stripped = cast->getSubExpr();
    else break;
    stripped = stripped->IgnoreParens();
  }
  if (isa<CallExpr>(stripped)) {
    read(stripped);
    return derivedLocation(stripped);
  }
  if (stripped->isGLValue() || stripped->isTypeDependent()) return lvalue(stripped);
  read(stripped);
  return std::nullopt;
}

// One argument of a call to a Pure or ArgumentsOnly callee, passed as a parameter of type `parameterType` (null or
// dependent when unknown; then `readOnlyInEveryCandidate` says whether every overload takes it read-only).
void EffectCollector::argument(const clang::Expr* argument, clang::QualType parameterType, CalleeKind kind,
                               const std::string& callee, bool readOnlyInEveryCandidate) {
  using namespace clang;
  const SourceLocation where = argument->getExprLoc();
  const bool unknownType = parameterType.isNull() || parameterType->isDependentType();
  if (unknownType && kind == CalleeKind::ArgumentsOnly && !readOnlyInEveryCandidate) {
    // The argument may be a pointer or a reference the callee writes through.
    auto location = designated(argument);
    if (!location) {
      if (!argument->getType()->isDependentType() && argument->getType()->isArithmeticType()) return;
      barrier("passes a value whose storage the analysis cannot trace to '" + callee + "'", where);
      return;
    }
    location->reachable = true;
    recordRead(*location, where);
    recordWrite(*location, where);
    return;
  }
  if (unknownType) {
    if (auto location = designated(argument)) recordRead(*location, where);
    return;
  }
  if (const auto* reference = parameterType->getAs<ReferenceType>()) {
    auto location = designated(argument);
    const bool writes = kind == CalleeKind::ArgumentsOnly && !reference->getPointeeType().isConstQualified();
    if (!location) {
      if (writes) barrier("passes a value whose storage the analysis cannot trace to '" + callee + "'", where);
      return;
    }
    // Through a reference the callee reaches what the object points to as well (a view's elements).
    if (kind == CalleeKind::ArgumentsOnly) location->reachable = true;
    recordRead(*location, where);
    if (writes) recordWrite(*location, where);
    return;
  }
  if (parameterType->isPointerType() && kind == CalleeKind::ArgumentsOnly) {
    std::optional<StorageLocation> location = pointee(argument);
    if (!location) location = derivedLocation(argument->IgnoreParenImpCasts());
    if (!location) {
      barrier("passes a pointer that the analysis cannot trace to '" + callee + "'", where);
      return;
    }
    recordRead(*location, where);
    if (!parameterType->getPointeeType().isConstQualified()) recordWrite(*location, where);
    return;
  }
  if (parameterType->isPointerType()) {
    // A pure callee only uses the pointer's value; an array argument decays without its contents being read.
    (void)pointee(argument);
    return;
  }
  readValue(argument);
}

// Overloaded operators on dependent types in template patterns: taken as their builtin meaning.
void EffectCollector::dependentOperator(const clang::CXXOperatorCallExpr* call) {
  using namespace clang;
  const OverloadedOperatorKind op = call->getOperator();
  const bool assigns = op == OO_Equal || op == OO_PlusEqual || op == OO_MinusEqual || op == OO_StarEqual ||
                       op == OO_SlashEqual || op == OO_PercentEqual || op == OO_AmpEqual || op == OO_PipeEqual ||
                       op == OO_CaretEqual || op == OO_LessLessEqual || op == OO_GreaterGreaterEqual ||
                       op == OO_PlusPlus || op == OO_MinusMinus;
  if (op == OO_Subscript || op == OO_Star) {
    if (auto location = lvalue(call)) recordRead(*location, call->getExprLoc());
    return;
  }
  for (unsigned i = 0; i < call->getNumArgs(); ++i) {
    if (i == 0 && assigns) {
      if (auto location = lvalue(call->getArg(0))) {
        if (op != OO_Equal) recordRead(*location, call->getExprLoc());
        recordWrite(*location, call->getExprLoc());
      } else {
        barrier("writes memory that the analysis cannot trace to a variable", call->getExprLoc());
      }
      continue;
    }
    read(call->getArg(i));
  }
}

// Whether every overload candidate takes parameter `index` read-only: by const reference, as a pointer to const, or
// by value (a concrete type, not a bare template parameter that might be a pointer).
bool readOnlyInEveryCandidate(const std::vector<const clang::FunctionDecl*>& candidates, unsigned index) {
  using namespace clang;
  if (candidates.empty()) return false;
  for (const FunctionDecl* candidate : candidates) {
    if (index >= candidate->getNumParams()) continue;
    QualType type = candidate->getParamDecl(index)->getType();
    if (type->isReferenceType() || type->isPointerType()) {
      if (!type->getPointeeType().isConstQualified()) return false;
    } else if (type->isTemplateTypeParmType() || type->isUndeducedType()) {
      return false;
    }
  }
  return true;
}

void EffectCollector::call(const clang::CallExpr* call) {
  using namespace clang;
  const Expr* calleeExpression = call->getCallee()->IgnoreParenImpCasts();
  const FunctionDecl* callee = call->getDirectCallee();
  const Expr* objectExpression = nullptr;
  bool objectIsArrow = false;
  std::string name;
  std::vector<const FunctionDecl*> candidates;
  auto addCandidates = [&](const OverloadExpr* overloads) {
    for (const NamedDecl* decl : overloads->decls()) {
      decl = decl->getUnderlyingDecl();
      if (const auto* function = dyn_cast<FunctionDecl>(decl)) candidates.push_back(function);
      else if (const auto* functionTemplate = dyn_cast<FunctionTemplateDecl>(decl))
        candidates.push_back(functionTemplate->getTemplatedDecl());
    }
  };

  const auto* operatorCall = dyn_cast<CXXOperatorCallExpr>(call);
  if (operatorCall && (callee == nullptr || operatorCall->isTypeDependent()) &&
      !isa<CXXDependentScopeMemberExpr, UnresolvedMemberExpr>(calleeExpression))
    return dependentOperator(operatorCall);

  unsigned firstArgument = 0;
  if (const auto* memberCall = dyn_cast<CXXMemberCallExpr>(call)) {
    objectExpression = memberCall->getImplicitObjectArgument();
    if (const auto* member = dyn_cast<MemberExpr>(calleeExpression)) objectIsArrow = member->isArrow();
  } else if (operatorCall && isa_and_nonnull<CXXMethodDecl>(callee)) {
    objectExpression = operatorCall->getArg(0);
    firstArgument = 1;
  } else if (const auto* member = dyn_cast<UnresolvedMemberExpr>(calleeExpression)) {
    name = member->getMemberName().getAsString();
    if (!member->isImplicitAccess()) objectExpression = member->getBase();
    objectIsArrow = member->isArrow();
    addCandidates(member);
  } else if (const auto* member = dyn_cast<CXXDependentScopeMemberExpr>(calleeExpression)) {
    name = member->getMember().getAsString();
    if (!member->isImplicitAccess()) objectExpression = member->getBase();
    objectIsArrow = member->isArrow();
  } else if (const auto* lookup = dyn_cast<UnresolvedLookupExpr>(calleeExpression)) {
    name = lookup->getName().getAsString();
    addCandidates(lookup);
  } else if (const auto* dependentName = dyn_cast<DependentScopeDeclRefExpr>(calleeExpression)) {
    name = dependentName->getNameInfo().getAsString();
  }
  if (callee != nullptr) name = callee->getNameAsString();
  // A call of a callable variable (`waitForA(k)` on a lambda) is also known by the variable's name.
  std::string variableName;
  const Expr* callable = operatorCall && operatorCall->getOperator() == OO_Call ? operatorCall->getArg(0)
                                                                                 : call->getCallee();
  if (const auto* reference = dyn_cast<DeclRefExpr>(callable->IgnoreParenImpCasts());
      reference && isa<VarDecl>(reference->getDecl()))
    variableName = reference->getDecl()->getNameAsString();

  if ((!name.empty() && analyzer_.isWaitFunction(name)) ||
      (!variableName.empty() && analyzer_.isWaitFunction(variableName))) {
    // A wait reads its object and arguments and makes the producer's data visible behind every pointer argument.
    const bool firstWait = !out_.waitCall;
    if (firstWait) out_.waitCall = call->getBeginLoc();
    object(objectExpression, objectIsArrow, /*mayWrite=*/false);
    for (unsigned i = firstArgument; i < call->getNumArgs(); ++i) {
      const Expr* argument = call->getArg(i);
      if (argument->getType()->isPointerType() || argument->getType()->isArrayType()) {
        if (auto location = pointee(argument)) recordWrite(*location, argument->getExprLoc());
      } else {
        readValue(argument);
      }
    }
    // Reads are recorded in execution order on the straight-line path, up to and including the arguments of a wait
    // that is a whole statement there (in an expression, the order of other operands is unspecified).
    const bool wholeStatement =
        statementExpression_ != nullptr && statementExpression_->IgnoreImplicit()->IgnoreParens() == call;
    if (firstWait && controlFlow_ == 0 && wholeStatement) out_.readsBeforeWait = out_.reads.size();
    return;
  }

  CalleeSummary summary;
  if (std::optional<CalleeKind> named = analyzer_.kindByName(variableName); named && !variableName.empty()) {
    summary.kind = *named;
  } else if (callee != nullptr) {
    summary = analyzer_.summarize(callee);
  } else if (!name.empty()) {
    summary = analyzer_.summarizeByName(name, candidates);
  } else {
    read(call->getCallee());
    return barrier("calls through a function pointer or a callable object" +
                       (variableName.empty() ? std::string() : " ('" + variableName + "')"),
                   call->getBeginLoc());
  }
  if (!variableName.empty() && (name.empty() || name == "operator()")) name = variableName;
  if (summary.waits && !out_.waitCall) out_.waitCall = call->getBeginLoc();
  if (summary.kind == CalleeKind::Unknown) {
    return barrier("calls '" + name + "', which " + summary.why, call->getBeginLoc());
  }
  // A trivial copy assignment is a plain store.
  if (const auto* method = dyn_cast_or_null<CXXMethodDecl>(callee);
      method && method->isTrivial() && operatorCall && operatorCall->getOperator() == OO_Equal) {
    if (auto location = lvalue(operatorCall->getArg(0))) recordWrite(*location, call->getExprLoc());
    else barrier("writes memory that the analysis cannot trace to a variable", call->getExprLoc());
    if (auto source = lvalue(operatorCall->getArg(1))) recordRead(*source, call->getExprLoc());
    return;
  }
  const auto* method = dyn_cast_or_null<CXXMethodDecl>(callee);
  const bool objectMayWrite = summary.kind == CalleeKind::ArgumentsOnly && (method == nullptr || !method->isConst());
  if (method == nullptr || !method->isStatic()) object(objectExpression, objectIsArrow, objectMayWrite);
  for (unsigned i = firstArgument; i < call->getNumArgs(); ++i) {
    const unsigned parameterIndex = i - firstArgument;
    QualType parameterType;
    // An unresolved call with a single candidate (a non-template function called with dependent arguments) takes
    // its parameter types from that candidate.
    const FunctionDecl* declaration = callee != nullptr ? callee : candidates.size() == 1 ? candidates[0] : nullptr;
    if (declaration != nullptr && parameterIndex < declaration->getNumParams())
      parameterType = declaration->getParamDecl(parameterIndex)->getType();
    else if (declaration != nullptr)
      parameterType = call->getArg(i)->getType();  // variadic: passed by value
    argument(call->getArg(i), parameterType, summary.kind, name,
             declaration == nullptr && readOnlyInEveryCandidate(candidates, parameterIndex));
  }
}

void EffectCollector::construct(const clang::CXXConstructExpr* construction) {
  using namespace clang;
  const CXXConstructorDecl* constructor = construction->getConstructor();
  CalleeKind kind = CalleeKind::Pure;
  if (!constructor->isTrivial()) {
    CalleeSummary summary = analyzer_.summarize(constructor);
    if (summary.waits && !out_.waitCall) out_.waitCall = construction->getBeginLoc();
    if (summary.kind == CalleeKind::Unknown)
      return barrier("constructs '" + constructor->getParent()->getNameAsString() + "' with a constructor which " +
                         summary.why,
                     construction->getBeginLoc());
    kind = summary.kind;
  }
  for (unsigned i = 0; i < construction->getNumArgs(); ++i) {
    QualType parameterType = i < constructor->getNumParams() ? constructor->getParamDecl(i)->getType()
                                                             : construction->getArg(i)->getType();
    argument(construction->getArg(i), parameterType, kind, constructor->getParent()->getNameAsString());
  }
}

bool hasAnnotation(const clang::FunctionDecl* function, llvm::StringRef annotation) {
  for (const clang::FunctionDecl* declaration : function->redecls())
    for (const auto* attribute : declaration->specific_attrs<clang::AnnotateAttr>())
      if (attribute->getAnnotation() == annotation) return true;
  return false;
}

bool hasConstAttribute(const clang::FunctionDecl* function) {
  for (const clang::FunctionDecl* declaration : function->redecls())
    if (declaration->hasAttr<clang::ConstAttr>()) return true;
  return false;
}

}  // namespace

std::string StorageLocation::spelling() const {
  std::string text = rootName;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '*') {
      if (i + 1 < path.size() && path[i + 1] == '.') {
        text += "->";
        i += 2;
      } else {
        text = "*" + text;
        ++i;
      }
      continue;
    }
    if (path[i] == '.') {
      text += '.';
      ++i;
    }
    while (i < path.size() && path[i] != '.' && path[i] != '*') text += path[i++];
  }
  return text;
}

bool writeAffectsRead(const StorageLocation& written, const StorageLocation& read) {
  if (written.root != read.root) return false;
  if (written.reachable || read.reachable)
    return isPrefixPath(written.path, read.path) || isPrefixPath(read.path, written.path);
  if (isPrefixPath(written.path, read.path)) return true;
  // Reading an enclosing object reads the written part, unless that part lies behind a pointer.
  return isPrefixPath(read.path, written.path) && written.path.find('*', read.path.size()) == std::string::npos;
}

bool writesOverlap(const StorageLocation& first, const StorageLocation& second) {
  return first.root == second.root && (isPrefixPath(first.path, second.path) || isPrefixPath(second.path, first.path));
}

StatementEffects AccessAnalyzer::analyze(const clang::Stmt* statement) {
  StatementEffects effects;
  EffectCollector(*this, effects).statement(statement);
  return effects;
}

CalleeSummary AccessAnalyzer::summarizeByName(const std::string& name,
                                              const std::vector<const clang::FunctionDecl*>& candidates) {
  if (options_.pureFunctions.count(name)) return {CalleeKind::Pure, "", false};
  if (options_.argsOnlyFunctions.count(name)) return {CalleeKind::ArgumentsOnly, "", false};
  if (candidates.empty()) return {CalleeKind::Unknown, "cannot be resolved in the template", false};
  CalleeSummary combined{CalleeKind::Pure, "", false};
  for (const clang::FunctionDecl* candidate : candidates) {
    CalleeSummary summary = summarize(candidate);
    combined.waits = combined.waits || summary.waits;
    if (summary.kind == CalleeKind::Unknown) return summary;
    if (summary.kind == CalleeKind::ArgumentsOnly) combined.kind = CalleeKind::ArgumentsOnly;
  }
  return combined;
}

CalleeSummary AccessAnalyzer::summarize(const clang::FunctionDecl* function) {
  function = function->getCanonicalDecl();
  if (auto known = summaries_.find(function); known != summaries_.end()) return known->second;
  const clang::FunctionDecl* pattern = function->getTemplateInstantiationPattern();
  const std::string name = function->getNameAsString();
  CalleeSummary summary;
  auto annotated = [&](llvm::StringRef annotation) {
    return hasAnnotation(function, annotation) || (pattern != nullptr && hasAnnotation(pattern, annotation));
  };
  if (annotated("cusync_pure") || hasConstAttribute(function) || options_.pureFunctions.count(name)) {
    summary = {CalleeKind::Pure, "", false};
  } else if (annotated("cusync_args_only") || options_.argsOnlyFunctions.count(name)) {
    summary = {CalleeKind::ArgumentsOnly, "", false};
  } else if (unsigned builtin = function->getBuiltinID()) {
    summary = context_.BuiltinInfo.isConst(builtin)
                  ? CalleeSummary{CalleeKind::Pure, "", false}
                  : CalleeSummary{CalleeKind::Unknown, "is a compiler builtin with side effects", false};
  } else {
    const clang::FunctionDecl* definition = nullptr;
    if (!function->hasBody(definition) && pattern != nullptr) pattern->hasBody(definition);
    if (definition != nullptr && definition->getBody() != nullptr) {
      summary = inferFromBody(definition);
    } else if (llvm::StringRef(name).starts_with("__nv_")) {
      summary = {CalleeKind::Pure, "", false};  // libdevice math: no memory effects
    } else {
      summary = {CalleeKind::Unknown,
                 "has no visible definition (annotate it cusync_pure or cusync_args_only if that is known)", false};
    }
  }
  summaries_[function] = summary;
  return summary;
}

// A callee is known when its body only touches its parameters, its own locals, its object (`this`) and read-only
// globals such as threadIdx: then its effect on the caller is that of its arguments.
CalleeSummary AccessAnalyzer::inferFromBody(const clang::FunctionDecl* definition) {
  using namespace clang;
  constexpr size_t kMaximumCallDepth = 8;
  if (definition->isInvalidDecl()) return {CalleeKind::Unknown, "could not be parsed by Clang", false};
  if (inProgress_.count(definition) || inProgress_.size() >= kMaximumCallDepth)
    return {CalleeKind::Unknown, "is recursive or calls too deeply to analyze", false};
  inProgress_.insert(definition);
  StatementEffects effects;
  EffectCollector collector(*this, effects, /*ofCallee=*/true);
  if (const auto* constructor = dyn_cast<CXXConstructorDecl>(definition))
    for (const CXXCtorInitializer* initializer : constructor->inits()) collector.read(initializer->getInit());
  collector.statement(definition->getBody());
  inProgress_.erase(definition);

  CalleeSummary summary{CalleeKind::Pure, "", effects.waitCall.has_value()};
  if (!effects.barriers.empty()) {
    summary.kind = CalleeKind::Unknown;
    summary.why = effects.barriers.front().reason;
    return summary;
  }
  auto classify = [&](const Access& access, bool isWrite) -> bool {
    const void* root = access.location.root;
    using RootKind = StorageLocation::RootKind;
    if (access.location.kind == RootKind::Temporary) return true;
    if (access.location.kind == RootKind::This) {
      if (!isa<CXXConstructorDecl>(definition)) summary.kind = CalleeKind::ArgumentsOnly;
      return true;
    }
    for (const ParmVarDecl* parameter : definition->parameters()) {
      if (parameter->getCanonicalDecl() != root) continue;
      if (parameter->getType()->isReferenceType() || access.location.path.find('*') != std::string::npos)
        summary.kind = CalleeKind::ArgumentsOnly;
      return true;
    }
    const auto* variable =
        access.location.kind == RootKind::Declaration ? static_cast<const Decl*>(root) : nullptr;
    if (const auto* local = dyn_cast_or_null<VarDecl>(variable)) {
      if (local->hasLocalStorage() && !local->hasAttr<CUDASharedAttr>()) return true;
      if (!isWrite && local->getType().isConstQualified()) return true;  // threadIdx, blockIdx, constants
    }
    if (isa_and_nonnull<BindingDecl>(variable)) return true;
    summary.kind = CalleeKind::Unknown;
    summary.why = std::string(isWrite ? "writes" : "reads") + " '" + access.location.spelling() +
                  "', which is not one of its arguments";
    return false;
  };
  for (const Access& write : effects.writes)
    if (!classify(write, true)) return summary;
  for (const Access& read : effects.reads)
    if (!classify(read, false)) return summary;
  return summary;
}

}  // namespace cusync::tile_rewriter
