/* placeholder main replaced by the executor CLI */
int main(void) { return 2; }
