import { defineConfig } from "vite";

// The window loads the built files from ui/dist (tauri.conf.json).
export default defineConfig({
  clearScreen: false,
  build: { target: "es2022", outDir: "dist", emptyOutDir: true },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
} as any);
