// ESLint for Playhall's JavaScript: the web client (clients/playhall_web/static), its node
// tests (tests/js), the example bot (examples/bots) and the peers' benchmark (bench/peers). As strict in kind as ruff is for the Python: the recommended rules (errors a
// run would hit), the bug-prone patterns on top (bugbear's role), and modern syntax only
// (pyupgrade's). Layout is Prettier's job (.prettierrc.json), so no rule here is about format.
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    // Third-party code is kept as its authors wrote it.
    ignores: ["clients/playhall_web/static/lib/vendor/", ".venv/", "build/", "dist/", "**/node_modules/"],
  },
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: {
      // Mistakes that run without an error.
      eqeqeq: "error",
      "no-implicit-globals": "error",
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "all", ignoreRestSiblings: true }],
      "no-shadow": "error",
      // A closure may name what is declared below it; a use in the same scope before the line is an error.
      "no-use-before-define": ["error", { functions: false, classes: true, variables: false }],
      "no-self-compare": "error",
      "no-template-curly-in-string": "error",
      "no-unmodified-loop-condition": "error",
      "no-unreachable-loop": "error",
      "no-promise-executor-return": "error",
      "no-constructor-return": "error",
      "no-return-assign": "error",
      "no-sequences": "error",
      "no-throw-literal": "error",
      "no-useless-concat": "error",
      "no-useless-return": "error",
      "no-new-wrappers": "error",
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      "no-script-url": "error",
      "no-alert": "error",
      "no-console": ["error", { allow: ["error", "warn"] }],
      "array-callback-return": "error",
      "default-case-last": "error",
      "guard-for-in": "error",
      radix: "error",
      // Modern syntax only.
      "no-var": "error",
      "prefer-const": "error",
      "object-shorthand": "error",
      "prefer-arrow-callback": "error",
      "prefer-rest-params": "error",
      "prefer-spread": "error",
      "prefer-object-has-own": "error",
      "prefer-exponentiation-operator": "error",
      "no-useless-rename": "error",
      "no-useless-computed-key": "error",
      "no-lonely-if": "error",
      "no-else-return": "error",
      // Named imports in order, as ruff's isort rules keep them.
      "sort-imports": ["error", { ignoreDeclarationSort: true, ignoreCase: true }],
    },
  },
  {
    // The page: a browser's globals. lib/ is DOM-free and also runs under node (tests/js), so
    // it gets only what both have.
    files: ["clients/playhall_web/static/app/**/*.js"],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ["clients/playhall_web/static/lib/**/*.js"],
    languageOptions: { globals: globals["shared-node-browser"] },
  },
  {
    files: ["tests/js/**/*.mjs", "examples/**/*.mjs", "eslint.config.js", "bench/peers/*.js"],
    languageOptions: { globals: globals.node },
  },
];
