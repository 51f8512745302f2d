import Testing

/// A build over the type-check budget is timed again only when the budget is all that failed.
struct TypeCheckBudgetTests {
    @Test func onlyBudgetErrorsAreTimedAgain() {
        let overBudget = """
            Gen/M+Migrations.swift:224:17: error: static method 'migrationPlan' took 115ms to type-check (limit: 100ms)
            Gen/M+Migrations.swift:225:9: error: expression took 104ms to type-check (limit: 100ms)
            """
        #expect(GeneratedCodeTypeChecker.onlyOverBudget(overBudget))
        let alsoWrong = overBudget + "\nGen/M+Records.swift:3:5: error: cannot find 'Person' in scope"
        #expect(!GeneratedCodeTypeChecker.onlyOverBudget(alsoWrong))
        #expect(!GeneratedCodeTypeChecker.onlyOverBudget("ld: undefined symbol"))
    }
}
