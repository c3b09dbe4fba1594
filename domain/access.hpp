#pragma once
/// Access grants (layer 2 of spec 5.3): who may do what with one Resource. Roles, the group
/// directory (config, re-read on change; tokens never carry groups) and the pure rule that turns
/// a principal's grants into its effective role. docs/api.md ("Access grants") documents them.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cl::domain {

/// Roles, ordered: each may do everything the one before it may.
enum class access_role : std::uint8_t {
  none = 0,
  reader = 1,  ///< read the Resource, its versions, entities, content units and Activities
  writer = 2,  ///< and change it: PUT, PATCH, snapshots, promotion
  owner = 3,   ///< and read and manage its grants
};

std::string_view role_name(access_role role);

/// `reader`, `writer` or `owner`; nullopt otherwise (`none` is not a role one can grant).
std::optional<access_role> parse_role(std::string_view name);

/// True for a principal a grant can name: `u_` user, `a_` application or `g_` group, then 1 to
/// 128 of [A-Za-z0-9_-].
bool is_grantee(std::string_view principal);

/// Groups by tenant, from the directory file (config `access.directory_file`).
struct group_directory {
  std::string version;
  /// tenant -> group -> members (`u_`/`a_` principals)
  std::map<std::string, std::map<std::string, std::set<std::string>>> groups;

  /// The groups of `tenant` that list `principal`, in name order.
  std::vector<std::string> groups_of(const std::string& tenant, const std::string& principal) const;
  bool has_group(const std::string& tenant, const std::string& group) const;
};

/// Parses the directory file; the error names what is wrong.
std::variant<group_directory, std::string> parse_directory(std::string_view json_text);

/// One grant on a Resource.
struct access_grant {
  std::string resource_id;
  std::string principal;
  access_role role = access_role::none;
  std::string granted_by;
  std::string granted_at;
};

/// The grant's stored (and shown) JSON.
std::string grant_json(const access_grant& g);

/// Reads a stored grant back; nullopt for a malformed record.
std::optional<access_grant> parse_grant(std::string_view json_text);

/// The effective role of a caller: the highest role among the grants (principal -> role) that
/// name the caller itself or one of its groups; `none` when none does.
access_role effective_role(const std::vector<std::pair<std::string, access_role>>& grants, const std::string& subject,
                           const std::vector<std::string>& groups);

}  // namespace cl::domain
