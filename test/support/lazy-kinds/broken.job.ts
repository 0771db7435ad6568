import * as z from "zod";
import { jobBuilder, type UnboundApp } from "../../../lib/declarations/define-app.ts";

/**
 * A kind module that throws while it loads (test/integration/kind-loading.test.ts), as one whose
 * top level reads a setting that isn't there.
 */
const setting = process.env.SKYFORGE_TEST_NEVER_SET;
if (setting === undefined) throw new Error("the module broke at import: SKYFORGE_TEST_NEVER_SET is not set");

export default jobBuilder<UnboundApp>()({ payload: z.object({}), handler: async () => setting });
