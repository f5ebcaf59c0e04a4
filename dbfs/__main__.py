from dbfs.cli import main

main()
