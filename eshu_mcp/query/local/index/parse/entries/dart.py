"""Dart: read by the generic tags extractor over tree-sitter-dart.

The wheel ships a ``queries/tags.scm``, but it captures any identifier followed by anything
as a call and has no receivers, imports or bases, so this query replaces it. The grammar keeps
a method's signature and its body as siblings; the extractor joins them.
"""

_CHAIN_HEAD = (
    "[(identifier) (this) (super) (type_identifier) (new_expression) (const_object_expression)]"
    " @receiver"
)

TAGS = f"""
(class_definition name: (identifier) @name) @definition.class
(mixin_declaration (identifier) @name) @definition.mixin
(extension_declaration class: (type_identifier) @name) @definition.extension
(enum_declaration name: (identifier) @name) @definition.enum

(function_signature name: (identifier) @name) @definition.function
(function_signature (type_identifier) @result name: (identifier) @name) @definition.function
(getter_signature (type_identifier) @result name: (identifier) @name) @definition.function
(getter_signature name: (identifier) @name) @definition.function
(setter_signature name: (identifier) @name) @definition.function
(method_signature [
  (function_signature name: (identifier) @name)
  (getter_signature name: (identifier) @name)
  (setter_signature name: (identifier) @name)
  (constructor_signature name: (identifier) @name)
  (factory_constructor_signature (identifier) @name)]) @definition.method
(declaration [
  (constructor_signature name: (identifier) @name)
  (constant_constructor_signature (identifier) @name)]) @definition.method

(superclass (type_identifier) @name) @reference.class
(mixins (type_identifier) @name) @reference.class
(interfaces (type_identifier) @name) @reference.implementation

(_ (identifier) @name . (selector (argument_part)) @reference.call)
(_ {_CHAIN_HEAD}
   . (selector)*
   . (selector [(unconditional_assignable_selector (identifier) @name)
                (conditional_assignable_selector (identifier) @name)])
   . (selector (argument_part)) @reference.call)
(_ (super) @receiver
   . (unconditional_assignable_selector (identifier) @name)
   . (selector (argument_part)) @reference.call)
(_ {_CHAIN_HEAD}
   . (selector)*
   . (cascade_section)*
   . (cascade_section (cascade_selector (identifier) @name) . (argument_part)) @reference.call)
(cascade_section (cascade_selector (identifier) @name) . (argument_part)) @reference.call
(new_expression (type_identifier) @name) @reference.class
(const_object_expression (type_identifier) @name) @reference.class

(initialized_variable_definition
  (type_identifier) @assign.type name: (identifier) @assign.name) @assign
(initialized_variable_definition
  name: (identifier) @assign.name
  value: (new_expression (type_identifier) @assign.type)) @assign
(initialized_variable_definition
  name: (identifier) @assign.name
  value: (identifier) @assign.call
  . value: (selector (argument_part)) .) @assign
(initialized_variable_definition
  name: (identifier) @assign.name
  value: (identifier)
  . value: (selector (unconditional_assignable_selector (identifier) @assign.call))
  . value: (selector (argument_part)) .
  (#match? @assign.call "^[A-Z]")) @assign
((type_identifier) @assign.type
  . (static_final_declaration_list (static_final_declaration . (identifier) @assign.name))
  @assign)
(declaration
  (type_identifier) @assign.type
  (initialized_identifier_list (initialized_identifier (identifier) @assign.name))) @assign

(import_specification
  (configurable_uri (uri (string_literal) @import.module))
  (identifier)? @import.alias) @import
(library_export (configurable_uri (uri (string_literal) @import.module))) @import
(part_directive (uri (string_literal) @import.module)) @import

[(if_statement) (for_statement) (while_statement) (do_statement) (switch_statement_case)
 (catch_clause) (conditional_expression) (logical_and_operator) (logical_or_operator)
 (if_null_expression)] @complexity.branch
(function_expression) @complexity.scope
"""

LANGUAGE = {
    "key": "dart",
    "extensions": (".dart",),
    "extractor": "tags",
    "wheel": "tree-sitter-dart",
    "tags": TAGS,
    "builtins": frozenset(
        (
            *("print", "identical", "identityHashCode", "Future", "Stream", "List", "Map"),
            *("Set", "Iterable", "String", "int", "double", "num", "bool", "Object"),
            *("Duration", "DateTime", "Uri", "RegExp", "StringBuffer", "Exception", "Error"),
            *("ArgumentError", "StateError", "RangeError", "FormatException"),
            *("UnsupportedError", "UnimplementedError"),
        )
    ),
    "imports": "require",
    "module_paths": ((r"^package:[^/]+/", "lib/"),),  # package:name/x.dart: name's lib/x.dart
    "whole_file_imports": True,
    "implicit_this": True,
    "dispatched": True,
    "receivers": "dart",
    "capitalised_types": True,
    "unmarked_overrides": True,
    "dead_code": "derived",
    "exactness_blockers": ("dynamic calls", "calls on values of untyped receivers"),
    "entrypoints": ("main",),
    "public_api": "unless_hidden",
    "hidden_words": ("_",),
    "api_folders": ("lib",),
    "test_files": r"_test\.dart$",
    "packages": "pub",
}
