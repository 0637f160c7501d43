#pragma once
/// The contract every Store implementation passes (STYLE.md: one shared test
/// suite per interface): the fixture here, its tests in store_contract.cc.
/// An implementation's test instantiates it with a factory:
///
///   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContract, ::testing::Values(StoreFactory(&OpenForTest)));
///
/// The factory opens a fresh, empty store at `place` "" (and says where in
/// `*opened_at`), or the same store again for that `place` (another
/// process's connection). `*shown_as` is how the store's errors name it.
/// A factory whose backend is missing here calls GTEST_SKIP with the reason
/// and returns nullptr.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "store/store.h"

namespace accelopt::store::testing {

using StoreFactory =
    std::function<std::unique_ptr<Store>(const std::string& place, std::string* opened_at, std::string* shown_as)>;

class StoreContract : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    fresh_ = GetParam()("", &place_, &where_);
    if (IsSkipped()) return;
    ASSERT_NE(fresh_, nullptr) << "the factory did not open a fresh store";
  }
  /// The test's store, opened fresh by SetUp (first call), or another connection to it.
  std::unique_ptr<Store> Open() {
    if (fresh_) return std::move(fresh_);
    return GetParam()(place_, &place_, &where_);
  }
  std::unique_ptr<Store> fresh_;
  std::string place_;  ///< where the store is (a file, a URI)
  std::string where_;  ///< how its errors name it
};

StoredCandidate ContractCandidate(int64_t run_id, const std::string& task, int iteration, int64_t parent_id = 0);
StoredLesson ContractLesson(const std::string& memory, const std::string& title);

}  // namespace accelopt::store::testing
