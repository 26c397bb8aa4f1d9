export {};
//# sourceMappingURL=context.mjs.map