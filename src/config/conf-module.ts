// The entry of dist/conf.cjs (tsup.config.ts): conf, built apart from the CLI so that only the commands
// that write the config load it.
import Conf from 'conf';

export default Conf;
