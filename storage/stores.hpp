#pragma once
/// The record store with the core's typed stores, as callers outside storage/ use it: the seam
/// (storage/record_store.hpp) and every core store's interface.

#include "storage/content_stores.hpp"
#include "storage/contract_store.hpp"
#include "storage/grant_store.hpp"
#include "storage/ledger_store.hpp"
#include "storage/record_store.hpp"
